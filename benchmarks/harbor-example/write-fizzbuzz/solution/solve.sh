#!/bin/bash
set -euo pipefail
cd /app
cat > fizzbuzz.py <<'EOF'
def fizzbuzz(n):
    return ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i)
            for i in range(1, n + 1)]
EOF
