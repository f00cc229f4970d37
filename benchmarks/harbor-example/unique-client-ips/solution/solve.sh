#!/bin/bash
set -euo pipefail
cd /app
cut -d' ' -f1 access.log | sort -u -t. -k1,1n -k2,2n -k3,3n -k4,4n > ips.txt
