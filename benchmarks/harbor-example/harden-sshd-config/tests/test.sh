#!/bin/bash
# Runs the checks in /tests/check.py against /app; it writes /logs/verifier/reward.json, one
# key per part of the task and `reward`, their mean (partial credit).
mkdir -p /logs/verifier
python3 /tests/check.py
