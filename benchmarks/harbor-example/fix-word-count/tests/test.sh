#!/bin/bash
# Runs the checks in /tests/check.py against /app: 1 in /logs/verifier/reward.txt when they
# pass, else 0.
mkdir -p /logs/verifier
if python3 /tests/check.py; then
    echo 1 > /logs/verifier/reward.txt
else
    echo 0 > /logs/verifier/reward.txt
fi
