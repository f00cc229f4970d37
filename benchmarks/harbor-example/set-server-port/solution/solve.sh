#!/bin/bash
set -euo pipefail
cd /app
sed -i '/^\[server\]/,/^\[/ s/^port = .*/port = 8081/' server.ini
