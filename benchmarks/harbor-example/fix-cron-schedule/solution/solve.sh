#!/bin/bash
set -euo pipefail
cd /app
sed -i 's|^\* 2 \* \* \* /opt/jobs/backup.sh|30 2 * * * /opt/jobs/backup.sh|' jobs.cron
