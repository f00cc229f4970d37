#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
import csv, json
users = sorted(json.load(open("users.json")), key=lambda user: user["id"])
with open("users.csv", "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["id", "name", "email"])
    writer.writerows([user["id"], user["name"], user["email"]] for user in users)
EOF
