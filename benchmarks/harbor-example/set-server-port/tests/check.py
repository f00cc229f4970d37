"""Checks set-server-port: exits 0 when the task is done."""

import configparser

config = configparser.ConfigParser()
assert config.read("/app/server.ini") == ["/app/server.ini"], "cannot read /app/server.ini"
assert config["server"]["port"] == "8081", config["server"]["port"]
assert config["server"]["host"] == "0.0.0.0"
assert dict(config["metrics"]) == {"port": "9100", "enabled": "true"}, dict(config["metrics"])
