#!/bin/bash
set -euo pipefail
cd /app
cat > config.json <<'EOF'
{
  "name": "billing",
  "port": 8080,
  "debug": false,
  "hosts": ["a.internal", "b.internal"]
}
EOF
