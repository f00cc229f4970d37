#!/bin/bash
set -euo pipefail
cd /app
printf '#!/bin/sh\necho "hello, ${1:-world}"\n' > bin/greet
chmod +x bin/greet
