#!/bin/bash
set -euo pipefail
cd /app
sed -i 's/%Y-%d-%m/%Y-%m-%d/' dates.py
