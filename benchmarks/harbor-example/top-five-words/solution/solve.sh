#!/bin/bash
set -euo pipefail
cd /app
tr 'A-Z' 'a-z' < story.txt | grep -o '[a-z]*' | sort | uniq -c | sort -k1,1nr -k2,2 | head -5 | awk '{ print $2, $1 }' > top5.txt
