#!/bin/bash
set -euo pipefail
cd /app
for f in photos/*.JPEG; do mv "$f" "${f%.JPEG}.jpg"; done
