#!/bin/bash
set -euo pipefail
cd /app
{ echo region,total; awk -F, 'NR > 1 { t[$2] += $3 } END { for (r in t) printf "%s,%.2f\n", r, t[r] }' sales.csv | sort; } > totals.csv
