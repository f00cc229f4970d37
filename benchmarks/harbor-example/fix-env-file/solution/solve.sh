#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/^DEBUG=.*/DEBUG=false/' .env
echo LOG_LEVEL=info >> .env
