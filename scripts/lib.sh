# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Shared shell helpers for korch's scripts (sourced, not run).

say() { printf '[korch] %s\n' "$*" >&2; }
die() { printf '[korch] error: %s\n' "$*" >&2; exit 1; }
# A wrong command line: exit status 2, as korch's programs give.
usage_die() { printf '[korch] error: %s\n' "$*" >&2; exit 2; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "'$1' is required but not installed"; }

# Prints one deb-src line for the distribution's main archive, derived from the machine's own apt
# sources (one-line .list files and deb822 .sources files), e.g.
#   deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] URI bookworm main
debian_deb_src_entry() {
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ -n $codename ]] || die "cannot tell the Debian release: /etc/os-release has no VERSION_CODENAME"
  local files=()
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  local f
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] && files+=("$f")
  done
  local line=""
  for f in "${files[@]}"; do
    if [[ $f == *.sources ]]; then
      line=$(awk -v want="$codename" '
        function flush() {
          if (enabled != "no" && types ~ /deb/ && uris != "" && (" " suites " ") ~ (" " want " ")) {
            split(uris, u, " "); opt = (key != "") ? "[signed-by=" key "] " : "";
            print "deb-src " opt u[1] " " want " main"; found = 1; exit
          }
          types = uris = suites = key = ""; enabled = "yes"
        }
        BEGIN { enabled = "yes" }
        /^[[:space:]]*#/ { next }
        /^[[:space:]]*$/ { flush(); next }
        { field = tolower($1); sub(/:$/, "", field); $1 = ""; sub(/^ +/, "");
          if (field == "types") types = $0; else if (field == "uris") uris = $0;
          else if (field == "suites") suites = $0; else if (field == "signed-by") key = $0;
          else if (field == "enabled") enabled = tolower($0) }
        END { if (!found) flush() }' "$f")
    else
      line=$(awk -v want="$codename" '
        /^[[:space:]]*deb(-src)?[[:space:]]/ {
          opt = ""; i = 2
          if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opt = opt " " $i; i++ } opt = opt " " $i; i++ }
          if ($(i + 1) == want) { sub(/^ /, "", opt); print "deb-src " (opt != "" ? opt " " : "") $i " " want " main"; exit }
        }' "$f")
    fi
    [[ -n $line ]] && break
  done
  [[ -n $line ]] || die "no apt source for '$codename' found in /etc/apt; add the Debian archive to apt's sources"
  echo "$line"
}

# The machine's Debian archive entry rewritten for another kind and suite, e.g.
# `debian_apt_entry deb unstable`; the mirror is whatever the machine's apt already uses.
debian_apt_entry() {
  local kind=$1 suite=$2
  debian_deb_src_entry | sed -E "s/^deb-src /$kind /; s/ [^ ]+ main\$/ $suite main/"
}

# Fills the array named by $1 with apt-get options for a private apt configuration under DIR whose
# only source is the line(s) in DIR/sources.list; the system's apt state is left untouched.
private_apt_options() {
  local -n opts_out=$1
  local dir=$2
  mkdir -p "$dir/lists/partial" "$dir/archives/partial"
  opts_out=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
            -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache::Archives=$dir/archives"
            -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
}

# Installs the named Debian packages that are missing (root, or sudo when available).
ensure_apt_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  local sudo=()
  ((EUID == 0)) || sudo=(sudo)
  say "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq || say "warning: apt-get update failed; trying the install anyway"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}
