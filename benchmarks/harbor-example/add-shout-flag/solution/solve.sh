#!/bin/bash
set -euo pipefail
cd /app
python3 - <<'EOF'
from pathlib import Path
path = Path("greet.py")
text = path.read_text()
text = text.replace('    parser.add_argument("name")\n',
                    '    parser.add_argument("name")\n    parser.add_argument("--shout", action="store_true")\n')
text = text.replace('    print(f"Hello, {args.name}!")\n',
                    '    greeting = f"Hello, {args.name}!"\n    print(greeting.upper() if args.shout else greeting)\n')
path.write_text(text)
EOF
