#!/usr/bin/env bash
# Dev tool, NOT run by CI (it needs the network): fetches the third-party
# Dockerfiles listed in tests/real/corpus.tsv (repository, commit, path) into
# a scratch directory (never into the repository), lints them all with one
# `trainimg lint DIR`, and prints the findings as TSV rows
# (repository, commit, path, line, rule) ready to be judged in verdicts.tsv.
#
#   tests/real/fetch_and_lint.sh [TRAINIMG] [OUTDIR]     (defaults: build/trainimg, /tmp/corpus)
#
# A repository already mirrored under $MIRRORS/OWNER+NAME/repo (a bare git
# directory) is read from there; otherwise it is cloned blob-less from GitHub.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/trainimg}
out=${2:-/tmp/corpus}
mirrors=${MIRRORS:-/work/.mirror}
mkdir -p "$out/files" "$out/git"
declare -A map
while IFS=$'\t' read -r repo commit path; do
  [[ -z "$repo" || "$repo" == \#* ]] && continue
  gitdir="$mirrors/${repo/\//+}/repo"
  if [[ ! -d "$gitdir" ]]; then
    gitdir="$out/git/${repo/\//+}"
    [[ -d "$gitdir" ]] || git clone -q --bare --filter=blob:none "https://github.com/$repo" "$gitdir"
  fi
  dest="$out/files/${repo/\//+}/${commit:0:12}/$path"
  mkdir -p "$(dirname "$dest")"
  git --git-dir="$gitdir" show "$commit:$path" > "$dest"
  map["$dest"]="$repo	$commit	$path"
done < "$here/corpus.tsv"
set +e
"$bin" lint "$out/files" --format json --fail-on never > "$out/lint.json" 2> "$out/lint.stderr"
rc=$?
set -e
echo "trainimg lint exit code: $rc (stderr: $out/lint.stderr)" >&2
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
doc = json.load(open(os.path.join(out, "lint.json")))
pre = os.path.join(out, "files") + "/"
for f in doc["findings"]:
    rel = f["file"][len(pre):] if f["file"].startswith(pre) else f["file"]
    repo, commit12, path = rel.split("/", 2)
    print("\t".join([repo.replace("+", "/"), commit12, path, str(f["line"]), f["rule"], f["severity"], f["message"]]))
for n in doc.get("notes", []):
    print("note\t" + n)
PY
cat "$out/lint.stderr" >&2
