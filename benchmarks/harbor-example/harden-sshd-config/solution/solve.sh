#!/bin/bash
set -euo pipefail
cd /app
sed -i -e 's/^PermitRootLogin .*/PermitRootLogin no/' -e 's/^PasswordAuthentication .*/PasswordAuthentication no/' \
    -e 's/^X11Forwarding .*/X11Forwarding no/' sshd_config
