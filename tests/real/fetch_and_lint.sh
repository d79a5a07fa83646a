#!/usr/bin/env bash
# Dev tool, NOT run by CI (it needs the network): fetches the third-party
# Dockerfiles listed in tests/real/corpus.tsv (repository, commit, path) into
# a scratch directory (never into the repository), lints them all with one
# `trainimg lint DIR`, and prints the findings as TSV rows
# (repository, commit, path, line, rule) ready to be judged in verdicts.tsv.
#
#   tests/real/fetch_and_lint.sh [TRAINIMG] [OUTDIR]     (defaults: build/trainimg, /tmp/corpus)
#
# CORPUS=FILE reads another list of the same form (one pass, for instance).
# A repository already mirrored under $MIRRORS/OWNER+NAME/repo (a bare git
# directory) is read from there; otherwise it is cloned blob-less from GitHub.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/trainimg}
out=${2:-/tmp/corpus}
mirrors=${MIRRORS:-/work/.mirror}
mkdir -p "$out/files" "$out/git"
rm -rf "$out/files" "$out/map.tsv"  # scratch: only this corpus is linted
declare -A map
while IFS=$'\t' read -r repo commit path; do
  [[ -z "$repo" || "$repo" == \#* ]] && continue
  gitdir="$mirrors/${repo/\//+}/repo"
  if [[ ! -d "$gitdir" ]]; then
    gitdir="$out/git/${repo/\//+}"
    if [[ ! -d "$gitdir" ]] && ! git clone -q --bare --filter=blob:none "https://github.com/$repo" "$gitdir"; then
      echo "skipped $repo $path: neither mirrored nor reachable" >&2
      continue
    fi
  fi
  dest="$out/files/${repo/\//+}/${commit:0:12}/$path"
  # A name the directory walk does not pick up (Dockerfile-cu11.base,
  # Dockerfile_amd) is copied as NAME.Dockerfile; the report names the path.
  case "$(basename "$path")" in
    Dockerfile | Dockerfile.* | *.Dockerfile | *.dockerfile) ;;
    *) dest="$dest.Dockerfile" ;;
  esac
  mkdir -p "$(dirname "$dest")"
  git --git-dir="$gitdir" show "$commit:$path" > "$dest"
  map["$dest"]="$repo	$commit	$path"
  printf '%s\t%s\t%s\t%s\n' "$dest" "$repo" "$commit" "$path" >> "$out/map.tsv"
done < "${CORPUS:-$here/corpus.tsv}"
set +e
"$bin" lint "$out/files" --format json --fail-on never > "$out/lint.json" 2> "$out/lint.stderr"
rc=$?
set -e
echo "trainimg lint exit code: $rc (stderr: $out/lint.stderr)" >&2
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
doc = json.load(open(os.path.join(out, "lint.json")))
where = {}
for line in open(os.path.join(out, "map.tsv")):
    dest, repo, commit, path = line.rstrip("\n").split("\t")
    where[os.path.normpath(dest)] = (repo, commit[:12], path)
for f in doc["findings"]:
    repo, commit12, path = where[os.path.normpath(os.path.join(os.getcwd(), f["file"]))]
    print("\t".join([repo, commit12, path, str(f["line"]), f["rule"], f["severity"], f["message"]]))
for n in doc.get("notes", []):
    print("note\t" + n)
PY
cat "$out/lint.stderr" >&2
