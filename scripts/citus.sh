#!/usr/bin/env bash
# A Citus cluster for warden's tests and benches (docs/deployment.md, "On Citus"), from the shared
# Citus source and its cluster.sh (found beside this repository: ../shared/citus, or CITUS_DIR).
#
#   scripts/citus.sh start [DIR]   build Citus when missing, start (or reuse) a coordinator on
#                                  CITUS_PORT (9700) and workers on the next two ports, data under
#                                  DIR; prints the coordinator's URL last
#   scripts/citus.sh db NAME       a new, empty database NAME on every node of that cluster, with
#                                  the citus extension and the workers added; prints its URL last
#   scripts/citus.sh drop NAME     drops database NAME on every node
#   scripts/citus.sh stop [DIR]    stops the nodes
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
citus_dir=${CITUS_DIR:-}
if [ -z "$citus_dir" ]; then
  for d in "$root/../shared/citus" /work/shared/citus; do [ -x "$d/cluster.sh" ] || [ -f "$d/cluster.sh" ] && { citus_dir=$d; break; }; done
fi
[ -n "$citus_dir" ] || { echo "citus: no cluster.sh found (set CITUS_DIR)" >&2; exit 1; }
port=${CITUS_PORT:-9700}
export CITUS_PORT=$port
host=127.0.0.1

on_node() { psql -qAtX -v ON_ERROR_STOP=1 -h "$host" -p "$1" -U postgres -d "$2" -c "$3" >/dev/null; }

case "${1:-}" in
  start)
    bash "$citus_dir/cluster.sh" build
    bash "$citus_dir/cluster.sh" start "${2:-/tmp/citus-cluster}"
    ;;
  db)
    name=${2:?database name}
    for p in "$port" $((port + 1)) $((port + 2)); do
      on_node "$p" postgres "DROP DATABASE IF EXISTS $name WITH (FORCE)"
      on_node "$p" postgres "CREATE DATABASE $name" 2>/dev/null
      on_node "$p" "$name" "CREATE EXTENSION citus"
    done
    on_node "$port" "$name" "SELECT citus_set_coordinator_host('$host', $port)"
    for p in $((port + 1)) $((port + 2)); do on_node "$port" "$name" "SELECT citus_add_node('$host', $p)"; done
    echo "postgres://postgres@$host:$port/$name"
    ;;
  drop)
    name=${2:?database name}
    for p in "$port" $((port + 1)) $((port + 2)); do on_node "$p" postgres "DROP DATABASE IF EXISTS $name WITH (FORCE)"; done
    ;;
  stop)
    bash "$citus_dir/cluster.sh" stop "${2:-/tmp/citus-cluster}"
    ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
