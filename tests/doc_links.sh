#!/usr/bin/env bash
# Every link in the READMEs resolves inside the repository: someone who clones quire has nothing
# beside it. Checked in README.md, every folder's README.md and docs/architecture.md:
# - Markdown links `[text](target)` that are not URLs: the target must exist from the file's folder;
# - file paths written as code (`docs/format.md`, `../cmake/check_shipped.cmake`): a path with a
#   slash and a file extension must name a file of the repository, from the file's folder, from the
#   repository root, from an include folder (`quire/platform.h`) or inside the part the README
#   describes (site/README.md's `views/quire.mjs` is site/viewer/views/quire.mjs). Build outputs
#   (`build/...`, `.../dist/...`) and patterns (`cases/*.cpp`, `<name>`) are left alone.
# Prints each broken link as FILE: TARGET and exits 1 when there is one.
#   tests/doc_links.sh [REPO]
set -uo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd) || exit 2
cd "$repo" || exit 2

# The repository's files, once (what a clone has: no build, no installed packages).
tree=$(find . \( -name .git -o -name node_modules -o -name .deps -o -name build \) -prune -o -type f -print | sed 's|^\./||')

broken=0
checked=0
report() {
  echo "$1: $2 does not resolve inside the repository"
  broken=$((broken + 1))
}

for file in README.md */README.md docs/architecture.md; do
  [ -f "$file" ] || continue
  dir=$(dirname "$file")
  # Markdown links.
  while IFS= read -r target; do
    target=${target%%#*}
    case "$target" in '' | http://* | https://* | mailto:*) continue ;; esac
    checked=$((checked + 1))
    [ -e "$dir/$target" ] || report "$file" "$target"
  done < <(grep -oE '\]\([^) ]+\)' "$file" | sed -E 's/^\]\((.*)\)$/\1/')
  # Paths written as code.
  while IFS= read -r path; do
    path=${path%%:*}
    case "$path" in
      *'*'* | *'<'* | *'{'* | *'$'* | *'?'* | build/* | */dist/* | dist/* | http* | /*) continue ;;
      */*.[A-Za-z]*) ;;
      *) continue ;;
    esac
    checked=$((checked + 1))
    found=0
    for base in "$dir" . core/include native/include bench/include; do
      if [ -e "$base/$path" ]; then found=1; break; fi
    done
    if [ "$found" = 0 ] && [ "${path#../}" = "$path" ]; then
      # Inside the part the README describes: a file below its folder whose path ends so.
      prefix=""
      [ "$dir" = . ] || prefix="$dir/"
      found=$(awk -v p="$prefix" -v s="$path" 'index($0, p) == 1 && (substr($0, length(p) + 1) == s ||
                substr($0, length($0) - length(s)) == "/" s) { print 1; exit }' <<<"$tree")
      found=${found:-0}
    fi
    [ "$found" = 1 ] || report "$file" "$path"
  done < <(grep -oE '`[^` ]+`' "$file" | tr -d '`' | sort -u)
done

if [ "$checked" = 0 ]; then
  echo "doc_links: no link found: the search read nothing" >&2
  exit 1
fi
echo "doc_links: $checked links checked, $broken broken"
[ "$broken" = 0 ]
