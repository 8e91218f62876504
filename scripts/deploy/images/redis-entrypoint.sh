#!/bin/sh
# As the official image's entry point: a command starting with redis-server listens on all addresses
# without protected mode; anything else (redis-cli …) runs as given.
if [ "$1" = "redis-server" ]; then
  shift
  exec redis-server --bind '*' --protected-mode no "$@"
fi
exec "$@"
