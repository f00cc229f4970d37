#!/bin/bash
set -euo pipefail
cd /app
awk -F, 'NR == 1 || !seen[tolower($2)]++' contacts.csv > contacts_clean.csv
