#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || $3 > 100' orders.csv > big_orders.csv
