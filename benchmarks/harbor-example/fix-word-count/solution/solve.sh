#!/bin/bash
set -euo pipefail
cd /app
cat > wordcount.py <<'EOF'
import sys


def count_words(path):
    with open(path) as handle:
        return sum(len(line.split()) for line in handle)


if __name__ == "__main__":
    print(count_words(sys.argv[1]))
EOF
