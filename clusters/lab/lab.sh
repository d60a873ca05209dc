#!/usr/bin/env bash
# The offline lab: builds a kind node image, Kubernetes component images and Cilium images from Go modules
# and Debian packages, into one cache folder outside the repository. Every step is idempotent (a finished
# step leaves a stamp and is skipped) and prints its phase and timing; timings land in $LAB_CACHE/timings.tsv.
#
#   clusters/lab/lab.sh images      build everything (or: lab.sh images STEP… to run named steps)
#   clusters/lab/lab.sh up          start the lab's container engine (our address ranges, egress blocked)
#   clusters/lab/lab.sh down        delete the lab's kind clusters, stop its engine, undo what up added (says what)
#   clusters/lab/lab.sh status      what is built, what runs, the cache's size
#   clusters/lab/lab.sh steps [V…]  every step `images` builds, in order (one a line); with Cilium versions V
#
# The Cilium version is a parameter: versions.env names those built without being asked, and any other
# (`images cilium-1.19.8 image-cilium-1.19.8`, what `lab run --cilium 1.19.8` runs) is built the same way. What
# the module proxy refuses is said in one line per file (module, version, .info/.mod/.zip): nothing in the repo
# says beforehand what it serves.
#
# The only changes to third-party code: the dependency replaces of cilium-deps.tsv (module versions the proxy
# refuses, replaced by the nearest it serves) and the /proc/modules patch where a version still needs it
# (patch-cilium.sh). Both are named in the images' labels and in every bundle recorded with them.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB_CACHE=${LAB_CACHE:-$HOME/.cache/datapath-conformance/lab}
# shellcheck source=versions.env
. "$HERE/versions.env"

export GOMODCACHE="$LAB_CACHE/gomod" GOCACHE="$LAB_CACHE/gocache" GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
# Only the module proxy is reachable here and its checksum-database lookups answer for some modules only, so
# the lab does not consult the checksum database (GOSUMDB=off): modules are taken as the proxy serves them.
export GOSUMDB=off
BIN="$LAB_CACHE/bin" OUT="$LAB_CACHE/out" SRC="$LAB_CACHE/src" STAMPS="$LAB_CACHE/stamps" LOGS="$LAB_CACHE/log"
mkdir -p "$BIN" "$OUT" "$SRC" "$STAMPS" "$LOGS"
export PATH="$BIN:$PATH"

say() { printf '[lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "error: $*"; exit 1; }

# A Cilium version as a step names it: 1.19.8, 1.21.0-rc.1.
CILIUM_VERSION_RE='^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$'
# Versions asked for beyond CILIUM_VERSIONS: named as steps (`images cilium-1.19.8`) or given to `steps`.
EXTRA_CILIUM=""
# Every Cilium version this invocation knows: versions.env's, then those asked for.
cilium_versions() { printf '%s\n' $CILIUM_VERSIONS $EXTRA_CILIUM | awk 'NF && !seen[$0]++'; }
# ask_cilium V: build V too (refused in one line when it is no version).
ask_cilium() {
  [[ $1 =~ $CILIUM_VERSION_RE ]] || die "'$1' is no Cilium version (e.g. 1.19.8, 1.21.0-rc.1)"
  case " $CILIUM_VERSIONS $EXTRA_CILIUM " in *" $1 "*) ;; *) EXTRA_CILIUM+=" $1" ;; esac
}

# What the module proxy refused, from a go command's output (on stdin): one line per module file,
#   refused by the module proxy: MODULE VERSION .EXT (STATUS)
# MODULE as go names it (the proxy's case-encoding !x undone), EXT one of info, mod, zip.
proxy_refusals() {
  local bases base url status rel mod file
  bases=$(go env GOPROXY 2>/dev/null | tr ',|' '\n\n' | grep -vxE 'direct|off' || true)
  { grep -oE 'reading [a-z]+://[^ ]+/@v/[^ ]+\.(info|mod|zip): [^"]*' || true; } | while read -r _ url status; do
    url=${url%:}; status=${status%%\\n*}; status=${status%%\\t*}; rel=""
    for base in $bases; do [[ $url == "${base%/}"/* ]] && rel=${url#"${base%/}"/}; done
    [ -n "$rel" ] || rel=${url#*://*/}
    mod=$(printf '%s' "${rel%/@v/*}" | sed 's/!\([a-z]\)/\U\1/g'); file=${rel##*/@v/}
    printf 'refused by the module proxy: %s %s .%s (%s)\n' "$mod" "${file%.*}" "${file##*.}" "$status"
  done | awk '!seen[$0]++'
}

# step NAME FUNCTION [ARGS…]: run FUNCTION unless NAME's stamp exists; log to $LOGS/NAME.log; record the time.
step() {
  local name=$1; shift
  exec 9>"$STAMPS/.$name.lock"
  flock -n 9 || { say "$name: another lab run is building it; waiting"; flock 9; }
  # a stamp counts only for the same inputs (STEP_INPUTS: e.g. a package list); changed inputs rebuild
  local inputs="${STEP_INPUTS:-}"
  if [ -e "$STAMPS/$name" ] && [ "$(sed -n 2p "$STAMPS/$name")" = "$inputs" ]; then
    say "$name: done earlier ($(head -n 1 "$STAMPS/$name")), skipped"; return 0
  fi
  say "$name: started (log: $LOGS/$name.log)"
  local t0=$SECONDS refused
  # run in the background and wait: a function called as an `if` condition would run without errexit
  ( "$@" ) >"$LOGS/$name.log" 2>&1 &
  if ! wait $!; then
    # what the module proxy refused, one line per module file (kept for `status`), else the log's last lines
    refused=$(proxy_refusals <"$LOGS/$name.log")
    if [ -n "$refused" ]; then
      printf '%s\n' "$refused" >"$LOGS/$name.refused"
      while IFS= read -r line; do say "$name: FAILED: $line"; done <<<"$refused"
      say "$name: the whole output: $LOGS/$name.log"
    else
      rm -f "$LOGS/$name.refused"
      say "$name: FAILED after $((SECONDS - t0)) s; last lines of $LOGS/$name.log:"
      tail -n 15 "$LOGS/$name.log" >&2
    fi
    exit 1
  fi
  rm -f "$LOGS/$name.refused"
  local took=$((SECONDS - t0))
  printf '%s s on %s\n%s\n' "$took" "$(date -u +%FT%TZ)" "$inputs" >"$STAMPS/$name"
  printf '%s\t%s\t%s\n' "$name" "$took" "$(date -u +%FT%TZ)" >>"$LAB_CACHE/timings.tsv"
  say "$name: done in $((took / 60)) min $((took % 60)) s"
}

# image_step NAME IMAGE FUNCTION [ARGS…]: like step, but a stamp whose image is gone (a wiped docker data root)
# does not count.
image_step() {
  local name=$1 image=$2; shift 2
  if [ -e "$STAMPS/$name" ] && ! docker image inspect "$image" >/dev/null 2>&1; then rm -f "$STAMPS/$name"; fi
  step "$name" "$@"
}

img_id() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null | cut -c8-19 || true; }
stamp_of() { head -n 1 "$STAMPS/$1" 2>/dev/null | awk '{print $4}'; }

# Every step cmd_images builds, in its order (`lab.sh steps`; `lab run` estimates from it). A test holds
# this list to the steps cmd_images names.
lab_steps() {
  local b v
  printf '%s\n' host-packages rootfs-base tools kubernetes etcd coredns pause rootfs-node rootfs-cilium
  for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do echo "image-$b"; done
  printf '%s\n' image-etcd image-coredns image-pause image-agnhost image-tools image-node-base
  for v in $(cilium_versions); do printf '%s\n' "cilium-$v" "image-cilium-$v"; done
  echo image-node
}

# Only the steps named on the command line (all when none is named).
wanted() { [ ${#ONLY[@]} -eq 0 ] && return 0; local w; for w in "${ONLY[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }

# ---- Go builds -------------------------------------------------------------------------------------------

k8s_minor() { local v=${K8S_VERSION#v}; echo "${v%.*}"; }

# A wrapper module: k8s.io/kubernetes replaces its staging modules with ./staging/…, which the module zip
# lacks; the wrapper pins each staging module at its published v0.Y.Z instead.
build_kubernetes() {
  local w="$SRC/k8s-wrapper" kmod v0 ldflags bd
  rm -rf "$w"; mkdir -p "$w"; cd "$w"
  go mod init lab.local/k8s-wrapper
  go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >/dev/null
  kmod="$GOMODCACHE/cache/download/k8s.io/kubernetes/@v/$K8S_VERSION.mod"
  v0="v0.${K8S_VERSION#v1.}"
  go mod edit -require "k8s.io/kubernetes@$K8S_VERSION"
  for m in $(go mod edit -json "$kmod" | jq -r '.Replace[] | select(.New.Path | startswith("./")) | .Old.Path'); do
    go mod edit -replace "$m=$m@$v0"
  done
  bd=$(date -u +%FT%TZ)
  local minor; minor=$(k8s_minor); minor=${minor#1.}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitCommit=0000000000000000000000000000000000000000 -X $pkg.gitTreeState=clean -X $pkg.buildDate=$bd"
  done
  mkdir -p "$OUT/k8s"
  go build -trimpath -ldflags "$ldflags" -o "$OUT/k8s/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/test/images/agnhost
  "$OUT/k8s/kubeadm" version -o short
  "$OUT/k8s/kubeadm" config images list --kubernetes-version "$K8S_VERSION" | tee "$OUT/k8s/images.txt"
}

build_tools() {
  GOBIN="$BIN" go install "sigs.k8s.io/kind@$KIND_VERSION"
  GOBIN="$BIN" go install -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  kind version; helm version --short
}

# etcd's server module replaces its sibling modules with ../…: a wrapper module pins them at the same version
# and a three-line main of ours calls etcdmain, as etcd's own main does.
build_etcd() {
  local w="$SRC/etcd-wrapper" v="v${ETCD_VERSION%-*}"
  rm -rf "$w"; mkdir -p "$w"; cd "$w"
  go mod init lab.local/etcd-wrapper
  go mod edit -require "go.etcd.io/etcd/server/v3@$v"
  for m in go.etcd.io/etcd/api/v3 go.etcd.io/etcd/client/pkg/v3 go.etcd.io/etcd/client/v3 go.etcd.io/etcd/pkg/v3; do
    go mod edit -replace "$m=$m@$v"
  done
  printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >main.go
  mkdir -p "$OUT/etcd"
  go build -trimpath -ldflags "-s -w" -o "$OUT/etcd/etcd" .
  "$OUT/etcd/etcd" --version
}

build_coredns() {
  mkdir -p "$OUT/coredns"
  GOBIN="$OUT/coredns" go install -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
  "$OUT/coredns/coredns" -version
}

# pause: its C source ships in the kubernetes module; a static binary, as upstream builds it.
build_pause() {
  mkdir -p "$OUT/pause"
  gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-lab" -o "$OUT/pause/pause" \
    "$GOMODCACHE/k8s.io/kubernetes@$K8S_VERSION/build/pause/linux/pause.c"
  strip "$OUT/pause/pause"
}

# The dependency changes cilium-deps.tsv declares for version $1, applied to the writable copy $2: each line's
# pinned version must be what the copy's go.mod selects (a replace of its own counts), or the build stops.
# A version the table has no line for is resolved as the others were: a line of another version applies where
# this version's go.mod selects the same pinned module version (the proxy refuses it for every version), named
# with the version it was declared for. Prints one label line per change.
apply_cilium_deps() {
  local v=$1 src=$2 ver mod pinned repl why selected own done_mods=" "
  own=$(awk -F'\t' -v v="$v" '!/^#/ && $1 == v' "$HERE/cilium-deps.tsv")
  while IFS=$'\t' read -r ver mod pinned repl why; do
    [ -n "$ver" ] || continue
    if [ -n "$own" ] && [ "$ver" != "$v" ]; then continue; fi
    case "$done_mods" in *" $mod "*) continue ;; esac
    selected=$(cd "$src" && go mod edit -json | jq -r --arg m "$mod" '
      ([.Replace[]? | select(.Old.Path == $m) | "\(.New.Path)@\(.New.Version)"] | first) //
      ([.Require[]? | select(.Path == $m) | "\(.Path)@\(.Version)"] | first) // "absent"')
    if [ "$ver" = "$v" ]; then
      [ "$selected" = "$pinned" ] || die "cilium-deps.tsv: Cilium $v selects $mod as $selected, the table says $pinned"
    elif [ "$selected" != "$pinned" ]; then continue
    fi
    (cd "$src" && go mod edit -replace "$mod=$repl")
    done_mods+="$mod "
    if [ "$ver" = "$v" ]; then echo "replace ${mod}: ${pinned} => ${repl}"
    else echo "replace ${mod}: ${pinned} => ${repl} (cilium-deps.tsv's line for ${ver}: ${v} pins the same)"
    fi
  done < <(grep -v '^#' "$HERE/cilium-deps.tsv")
}

# Cilium $1's module source, unpacked into the module cache: `go mod download`, as for every module. Where the
# proxy refuses only the module's .mod and serves its .info and .zip, the .mod is not needed: the zip holds the
# same go.mod. A file proxy of the lab's own then answers for the .mod (a placeholder, in front of the others
# with a fallback on a missing file), the download takes the rest from the proxy, and the cache's .mod is
# rewritten with the zip's go.mod, as the proxy would have served it. Prints a label line when that was done;
# anything else refused fails (step names it).
fetch_cilium() {
  local v=$1 m=github.com/cilium/cilium json err refused local_proxy="$LAB_CACHE/modproxy"
  json=$(go mod download -json "$m@v$v" 2>&1) || true
  err=$(jq -r '.Error // empty' <<<"$json" 2>/dev/null || printf '%s' "$json")
  [ -z "$err" ] && return 0
  refused=$(printf '%s\n' "$err" | proxy_refusals)
  # anything but the module's own .mod refused: the download's output goes to the step's log, which names it
  if [ "$(printf '%s\n' "$refused" | wc -l)" != 1 ] || [[ $refused != "refused by the module proxy: $m v$v .mod ("* ]]; then
    printf '%s\n' "$json" >&2; return 1
  fi
  mkdir -p "$local_proxy/$m/@v"
  printf 'module %s\n' "$m" >"$local_proxy/$m/@v/v$v.mod"
  json=$(GOPROXY="file://$local_proxy,$(go env GOPROXY)" go mod download -json "$m@v$v" 2>&1) || true
  rm -f "$local_proxy/$m/@v/v$v.mod"
  err=$(jq -r '.Error // empty' <<<"$json" 2>/dev/null || printf '%s' "$json")
  if [ -n "$err" ]; then printf '%s\n' "$json" >&2; return 1; fi
  local mod_file; mod_file=$(jq -r .GoMod <<<"$json")
  chmod u+w "$mod_file"; cp "$(jq -r .Dir <<<"$json")/go.mod" "$mod_file"
  echo "source: the module proxy refuses $m v$v .mod but serves its .info and .zip; built from the zip, whose go.mod is the module's"
}

# Cilium from its module: a writable copy, the declared dependency changes and the /proc/modules patch check,
# the agent's binaries and the generic operator. $OUT/cilium-$v.patch.txt holds one label line per change.
build_cilium() {
  local v=$1 src="$SRC/cilium-$v" root="$OUT/cilium-$v/root" info rev date ver fetched
  fetched=$(fetch_cilium "$v")
  rm -rf "$src" "$OUT/cilium-$v"; cp -r "$GOMODCACHE/github.com/cilium/cilium@v$v" "$src"; chmod -R u+w "$src"
  { [ -n "$fetched" ] && echo "$fetched"; apply_cilium_deps "$v" "$src"; bash "$HERE/patch-cilium.sh" "$src"; } | tee "$OUT/cilium-$v.patch.txt"
  info="$GOMODCACHE/cache/download/github.com/cilium/cilium/@v/v$v.info"
  rev=$(jq -r '.Origin.Hash // "module" | .[0:9]' "$info"); date=$(jq -r .Time "$info")
  ver="$v $rev $date"
  cd "$src"
  mkdir -p "$root/usr/bin" "$root/opt/cni/bin" "$root/cni" "$root/var/lib/cilium" "$OUT/cilium-$v/tmp"
  local ld="-s -w -X 'github.com/cilium/cilium/pkg/version.ciliumVersion=$ver'"
  go build -trimpath -tags osusergo -ldflags "$ld" -o "$OUT/cilium-$v/tmp/" \
    ./daemon ./cilium-dbg ./cilium-health ./cilium-health/responder ./bugtool ./tools/mount ./tools/sysctlfix \
    ./plugins/cilium-cni
  local t="$OUT/cilium-$v/tmp"
  mv "$t/daemon" "$root/usr/bin/cilium-agent"; mv "$t/cilium-dbg" "$root/usr/bin/cilium-dbg"
  ln -sf cilium-dbg "$root/usr/bin/cilium"
  mv "$t/cilium-health" "$root/usr/bin/cilium-health"; mv "$t/responder" "$root/usr/bin/cilium-health-responder"
  mv "$t/bugtool" "$root/usr/bin/cilium-bugtool"; mv "$t/mount" "$root/usr/bin/cilium-mount"
  mv "$t/sysctlfix" "$root/usr/bin/cilium-sysctlfix"; mv "$t/cilium-cni" "$root/opt/cni/bin/cilium-cni"
  go build -trimpath -tags osusergo,ipam_provider_operator -ldflags "$ld" -o "$OUT/cilium-$v/cilium-operator-generic" ./operator
  cp -r bpf "$root/var/lib/cilium/bpf"
  install -m 0755 images/cilium/init-container.sh plugins/cilium-cni/install-plugin.sh plugins/cilium-cni/cni-uninstall.sh "$root/"
  cp -r install/kubernetes/cilium "$OUT/cilium-$v/chart"
  "$root/usr/bin/cilium-dbg" version --client 2>/dev/null || "$root/usr/bin/cilium-dbg" version || true
}

# ---- images ----------------------------------------------------------------------------------------------

# docker build with the legacy builder (docker.io 20.10 has no buildx) from a context directory.
dbuild() { DOCKER_BUILDKIT=0 docker build -q -t "$1" "$2"; }

ctx() { local d="$LAB_CACHE/ctx/$1"; rm -rf "$d"; mkdir -p "$d"; echo "$d"; }

LAB_LABEL='org.opencontainers.image.description="built on this machine by the cilium-datapath-conformance offline lab (clusters/lab/lab.sh)"'

# image_on_base TAG BINARY DEST [ENTRYPOINT]: the lab base with one binary at DEST (and, if given, run as the
# entrypoint: kubeadm's manifests name the kube-*/etcd commands on PATH, CoreDNS and agnhost expect one).
image_on_base() {
  local tag=$1 bin=$2 dest=$3 entry=${4:-} d; d=$(ctx "$(basename "$bin")")
  cp "$bin" "$d/"
  {
    printf 'FROM localhost/lab/rootfs-base:%s\nCOPY %s %s\n' "$DEBIAN_SUITE" "$(basename "$bin")" "$dest"
    [ -n "$entry" ] && printf 'ENTRYPOINT ["%s"]\n' "$dest"
    printf 'LABEL %s\n' "$LAB_LABEL"
  } >"$d/Dockerfile"
  dbuild "$tag" "$d"
}

image_component() { image_on_base "registry.k8s.io/$1:$K8S_VERSION" "$OUT/k8s/$1" "/usr/local/bin/$1"; }
image_etcd() { image_on_base "registry.k8s.io/etcd:$ETCD_VERSION" "$OUT/etcd/etcd" /usr/local/bin/etcd; }
image_coredns() { image_on_base "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" "$OUT/coredns/coredns" /coredns entrypoint; }

image_pause() {
  local d; d=$(ctx pause); cp "$OUT/pause/pause" "$d/"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\nLABEL %s\n' "$LAB_LABEL" >"$d/Dockerfile"
  dbuild "registry.k8s.io/pause:$PAUSE_VERSION" "$d"
}

image_agnhost() { image_on_base "$LAB_AGNHOST_IMAGE" "$OUT/k8s/agnhost" /agnhost entrypoint; }

# The suite's curl, holder (node) and capture (tcpdump) Pods all run the lab base.
image_tools() { docker tag "localhost/lab/rootfs-base:$DEBIAN_SUITE" "$LAB_TOOLS_IMAGE"; }

image_cilium() {
  local v=$1 d patch; d=$(ctx "cilium-$v")
  cp -a "$OUT/cilium-$v/root" "$d/root"; cp "$OUT/cilium-$v/cilium-operator-generic" "$d/"
  patch=$(lab_patch_label "$v")
  # /cni/loopback: install-plugin.sh copies it to the host's CNI directory
  cat >"$d/Dockerfile" <<DOCKERFILE
FROM localhost/lab/rootfs-cilium:$DEBIAN_SUITE
COPY root/ /
RUN ln -sf /usr/lib/cni/loopback /cni/loopback 2>/dev/null || true; mkdir -p /home/cilium
ENV INITSYSTEM=SYSTEMD HUBBLE_SERVER=unix:///var/run/cilium/hubble.sock
WORKDIR /home/cilium
LABEL $LAB_LABEL io.cilium.lab.source="github.com/cilium/cilium v$v (Go module)" io.cilium.lab.patch="$patch"
CMD ["/usr/bin/cilium-dbg"]
DOCKERFILE
  dbuild "$(lab_cilium_image "$v")" "$d"
  local o; o=$(ctx "operator-$v"); cp "$OUT/cilium-$v/cilium-operator-generic" "$o/"
  cat >"$o/Dockerfile" <<DOCKERFILE
FROM localhost/lab/rootfs-base:$DEBIAN_SUITE
COPY cilium-operator-generic /usr/bin/cilium-operator-generic
LABEL $LAB_LABEL io.cilium.lab.source="github.com/cilium/cilium v$v (Go module)" io.cilium.lab.patch="$patch"
CMD ["/usr/bin/cilium-operator-generic"]
DOCKERFILE
  dbuild "$(lab_operator_image "$v")" "$o"
}
# Every change the lab made to a Cilium build, one label: "; " between the lines of its patch file.
lab_patch_label() { awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$OUT/cilium-$1.patch.txt"; }
lab_cilium_image() { echo "localhost/lab/cilium:v$1-src"; }
lab_operator_image() { echo "localhost/lab/operator-generic:v$1-src"; }

# kind's base image, by hand: Debian's systemd, containerd and runc, kind's own files from its module, and the
# runc wrapper as containerd's runc. restrict_oom_score_adj: a negative oom_score_adj (static Pods get -998)
# needs CAP_SYS_RESOURCE, which this kernel's bounding set lacks; runc init then dies ("can't get final
# child's PID from pipe: EOF"). Restricted, containerd never asks below its own score.
image_node_base() {
  local d; d=$(ctx node-base)
  cp -r "$GOMODCACHE/sigs.k8s.io/kind@$KIND_VERSION/images/base/files" "$d/files"; chmod -R u+w "$d/files"
  chmod 0755 "$d/files/usr/local/bin/"* "$d/files/kind/bin/"*
  cp "$HERE/files/runc-nosysres" "$d/files/usr/local/sbin-runc-nosysres"
  cat >"$d/Dockerfile" <<DOCKERFILE
FROM localhost/lab/rootfs-node:$DEBIAN_SUITE
COPY files/ /
RUN set -e; mkdir -p /usr/local/sbin; mv /usr/local/sbin-runc-nosysres /usr/local/sbin/runc-nosysres; \\
    find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete; \\
    rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \\
      /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \\
      /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*; \\
    echo ReadKMsg=no >>/etc/systemd/journald.conf; \\
    [ -e /sbin/init ] || ln -s /lib/systemd/systemd /sbin/init; \\
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service; systemctl mask systemd-binfmt.service; \\
    mkdir -p /etc/kubernetes/manifests /opt/cni/bin; cp -a /usr/lib/cni/. /opt/cni/bin/; \\
    ln -sf /usr/bin/containerd /usr/local/bin/containerd; \\
    ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \\
      | jq 'del(.process.rlimits)' >/etc/containerd/cri-base.json; \\
    sed -i -e 's|^\(\s*\)SystemdCgroup = true|&\n\1BinaryName = "/usr/local/sbin/runc-nosysres"|' \\
      -e 's|sandbox_image = .*|sandbox_image = "registry.k8s.io/pause:$PAUSE_VERSION"|' \\
      -e 's|restrict_oom_score_adj = false|restrict_oom_score_adj = true|' /etc/containerd/config.toml
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
LABEL $LAB_LABEL
DOCKERFILE
  dbuild "localhost/lab/node-base:$DEBIAN_SUITE" "$d"
}

# kind's node-image contract: the kubeadm/kubelet/kubectl binaries, /kind/version, and every image kubeadm
# lists already in containerd's k8s.io namespace (kind never pulls them). The suite's workload images too.
#
# Where the images live: kind mounts a fresh volume at every node's /var, and docker fills it with the image's
# /var, so whatever containerd holds there is copied per node per cluster (2.8 GB a node here: 10 s alone, three
# at once in every `create cluster`), and a layer imported unpacked is unpacked on every node at its first
# container (the agent image's 1 GB: 16-29 s of the agents' start, the three nodes at once). So the images are
# unpacked once, here, into $OUT/node-store on the host (overlayfs layers need a real filesystem: the build
# container's own root is overlay), which every lab node mounts read-only at /kind/lab-store (clusters/profile.ts
# kindConfig); the node image's /var holds only containerd's databases, the images' manifests and configs (their
# layer blobs are dropped once unpacked, as kind's own containerd does for what it pulls:
# discard_unpacked_layers), and for each unpacked layer a directory whose fs is a link into the store. A layer is
# only ever a lower (read-only) directory of a container's overlay; what a container writes, and any image
# `kind load`ed later, is in the node's own /var as before.
image_node() {
  local c=lab-node-build store="$OUT/node-store"
  docker rm -f "$c" >/dev/null 2>&1 || true
  rm -rf "$store"; mkdir -p "$store"
  docker run -d --name "$c" --privileged -v "$store:/kind/lab-store" --entrypoint sleep "localhost/lab/node-base:$DEBIAN_SUITE" infinity
  trap 'docker rm -f lab-node-build >/dev/null 2>&1 || true' RETURN
  local b; for b in kubeadm kubelet kubectl; do docker cp "$OUT/k8s/$b" "$c:/usr/bin/$b"; done
  docker exec "$c" sh -c "mkdir -p /kind && echo $K8S_VERSION >/kind/version"
  docker exec -d "$c" sh -c 'containerd --root /kind/lab-store/root >/var/log/containerd-build.log 2>&1'
  local i; for i in $(seq 1 30); do docker exec "$c" ctr version >/dev/null 2>&1 && break; sleep 1; done
  local images=()
  for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do images+=("registry.k8s.io/$b:$K8S_VERSION"); done
  images+=("registry.k8s.io/etcd:$ETCD_VERSION" "registry.k8s.io/coredns/coredns:$COREDNS_VERSION"
    "registry.k8s.io/pause:$PAUSE_VERSION" "$LAB_AGNHOST_IMAGE" "$LAB_TOOLS_IMAGE")
  # versions.env's Cilium builds and any this build was asked for (EXTRA_CILIUM): a run `kind load`s only another
  local v; for v in $(cilium_versions); do
    docker image inspect "$(lab_cilium_image "$v")" >/dev/null 2>&1 && images+=("$(lab_cilium_image "$v")" "$(lab_operator_image "$v")")
  done
  docker save "${images[@]}" | docker exec -i "$c" ctr -n k8s.io images import --all-platforms --digests -
  docker exec "$c" sh -ec '
    for i in $(ctr -n k8s.io images ls -q); do ctr -n k8s.io images label "$i" io.cri-containerd.pinned=pinned >/dev/null; done
    # the layer blobs, now unpacked: every manifest of every image (an index lists its manifests)
    layers() { ctr -n k8s.io content get "$1" | jq -r "if .manifests then .manifests[].digest else empty end, if .layers then \"L \" + .layers[].digest else empty end"; }
    todo=$(ctr -n k8s.io images ls | awk "NR > 1 { print \$3 }" | sort -u)
    while [ -n "$todo" ]; do
      next=""
      for d in $todo; do for x in $(layers "$d" | tr " " "_"); do case $x in L_*) echo "${x#L_}" ;; *) next="$next $x" ;; esac; done; done >>/tmp/layers
      todo=$next
    done
    sort -u /tmp/layers | xargs -r ctr -n k8s.io content rm >/dev/null
    ctr -n k8s.io images ls -q
    ctr -n k8s.io content ls -q | sed "s/^sha256://" | sort >/tmp/kept
    pkill containerd; sleep 2; rm -f /var/log/containerd-build.log
    # a removed blob'"'"'s file goes only at a garbage collection of the same daemon'"'"'s run: removed here
    b=/kind/lab-store/root/io.containerd.content.v1.content/blobs/sha256
    ls "$b" | sort | comm -23 - /tmp/kept | (cd "$b" && xargs -r rm -f)
    # the node image'"'"'s /var/lib/containerd: the store'"'"'s databases and small content, each layer a link into it
    r=/kind/lab-store/root o=io.containerd.snapshotter.v1.overlayfs
    rm -rf /var/lib/containerd; mkdir -p /var/lib/containerd/$o/snapshots
    for d in "$r"/*; do case ${d##*/} in "$o") ;; *) cp -a "$d" /var/lib/containerd/ ;; esac; done
    cp -a "$r/$o/metadata.db" /var/lib/containerd/$o/
    for d in "$r/$o/snapshots"/*; do
      n=${d##*/}; mkdir -p /var/lib/containerd/$o/snapshots/$n
      ln -s "/kind/lab-store/root/$o/snapshots/$n/fs" /var/lib/containerd/$o/snapshots/$n/fs
    done
    du -sh /var/lib/containerd "$r"'
  docker commit --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'CMD []' "$c" "$LAB_NODE_IMAGE"
  printf '%s\n' "${images[@]}" >"$OUT/node-images.txt"
}

# ---- Debian root filesystems (mmdebstrap) and their images ------------------------------------------------

# The host's own Debian sources (mmdebstrap reads a sources file given as its mirror argument), plus the
# suite's backports from the same mirror: Cilium's agent image needs a bpftool that sees tcx links (Debian 12's
# 7.1 does not; bookworm-backports has 7.5).
debian_sources() {
  local f uri out="$LAB_CACHE/debian.sources"
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do [ -s "$f" ] && break; done
  [ -s "$f" ] || die "no Debian sources on this host"
  uri=$(awk '/^URIs:/ {print $2; exit} /^deb / {print $2; exit}' "$f")
  { cat "$f"; printf '\nTypes: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" "$DEBIAN_SUITE"; } >"$out"
  echo "$out"
}

host_packages() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io mmdebstrap clang-19 llvm-19 bpftool iproute2 iptables \
    jq gcc libc6-dev
}

# The lab's workload and component base: what kube-proxy needs (iptables, conntrack), and what the suite's
# Pods run (curl, tcpdump, node for the holder, ss, netstat, nslookup): one base, shared layers.
BASE_PACKAGES=ca-certificates,bash,iptables,nftables,conntrack,iproute2,ipset,kmod,procps,util-linux,jq,curl,tcpdump,nodejs,netcat-openbsd,bpftool,ethtool,iputils-ping,net-tools,bind9-dnsutils
# Cilium's agent image needs clang/llc (the datapath is compiled at run time; Debian 12's clang-19 is 19.1.7,
# the version upstream builds with).
CILIUM_PACKAGES=${BASE_PACKAGES/bpftool/bpftool\/$DEBIAN_SUITE-backports},clang-19,llvm-19,libelf1
# A kind node as kind's base image has it, with Debian's containerd and runc.
NODE_PACKAGES=systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash,ca-certificates,curl,jq,procps,containerd,runc,containernetworking-plugins,bpftool

rootfs() { # $1 name, $2 packages
  local tar="$OUT/rootfs-$1.tar"; rm -rf "$tar"
  mmdebstrap --variant=minbase --include="$2" --aptopt='Acquire::Retries "3"' \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
    --customize-hook='for v in 19; do [ -e "$1/usr/bin/clang-$v" ] && ln -sf "clang-$v" "$1/usr/bin/clang" && ln -sf "llc-$v" "$1/usr/bin/llc" && ln -sf "llvm-objcopy-$v" "$1/usr/bin/llvm-objcopy"; done; true' \
    "$DEBIAN_SUITE" "$tar" "$(debian_sources)"
  docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tar" "localhost/lab/rootfs-$1:$DEBIAN_SUITE"
  rm -f "$tar"
}

# ---- the container engine --------------------------------------------------------------------------------

DOCKER_ROOT="$LAB_CACHE/docker" DOCKER_PID="$LAB_CACHE/dockerd.pid"
# where dockerd reads its configuration and where the runc wrapper goes (LAB_* only to test `down` in a sandbox)
DAEMON_JSON=${LAB_DAEMON_JSON:-/etc/docker/daemon.json} RUNC_WRAPPER=${LAB_RUNC_WRAPPER:-/usr/local/sbin/runc-nosysres}
# what `up` changed on the host, so that `down` can tell the lab's changes from anyone else's
STATE="$LAB_CACHE/state"
# Every address the lab's containers get is ours: the default bridge, the pool for new networks, and kind's
# network, created here with an explicit subnet before kind would pick one.
LAB_BIP=172.31.250.1/24 LAB_POOL=172.31.0.0/16 KIND_SUBNET=172.31.100.0/24
# The dual-stack profile's network (kind joins it through KIND_EXPERIMENTAL_DOCKER_NETWORK, clusters/profile.ts):
# both families ours, the IPv6 one a ULA /64 apart from any the host routes.
KIND_DUAL_NETWORK=kind-dual KIND_DUAL_SUBNET=172.31.101.0/24 KIND_DUAL_SUBNET6=fd00:ca1d:101::/64

docker_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }
# a process that runs: `kill -0` also finds one that has exited and is not reaped yet (a zombie), and an exited
# dockerd is reaped by init, which on some machines does so only every 2 s (measured here: 1.9 s)
running() {
  local st
  kill -0 "$1" 2>/dev/null || return 1
  st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  st=${st##*) }
  [ "${st%% *}" != Z ]
}

# The daemon.json `up` writes (also how `down` recognises one the lab wrote before it kept a mark).
lab_daemon_json() {
  jq -n --arg root "$DOCKER_ROOT" --arg bip "$LAB_BIP" --arg pool "$LAB_POOL" --arg runc "$RUNC_WRAPPER" '{
    "data-root": $root, "bip": $bip, "default-address-pools": [{"base": $pool, "size": 24}],
    "ip-masq": false, "ipv6": false, "ip6tables": false,
    "runtimes": {"runc-nosysres": {"path": $runc}}, "default-runtime": "runc-nosysres",
    "log-driver": "json-file", "log-opts": {"max-size": "10m"}}'
}
sha_of() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

cmd_up() {
  command -v dockerd >/dev/null || die "dockerd is missing: run '$0 images host-packages' (apt-get install docker.io)"
  mkdir -p "$STATE"
  # a runc-nosysres that is not ours is kept aside and given back by `down`
  if [ -e "$RUNC_WRAPPER" ] && ! cmp -s "$HERE/files/runc-nosysres" "$RUNC_WRAPPER" && [ ! -e "$STATE/runc-wrapper.before" ]; then
    cp -p "$RUNC_WRAPPER" "$STATE/runc-wrapper.before"
  fi
  install -D -m 0755 "$HERE/files/runc-nosysres" "$RUNC_WRAPPER"
  if docker_up; then say "docker is already running ($(docker version --format '{{.Server.Version}}'))"
  else
    mkdir -p "$(dirname "$DAEMON_JSON")" "$DOCKER_ROOT"
    # someone else's daemon.json is kept aside (down puts it back); the one written here is marked by its hash
    if [ -s "$DAEMON_JSON" ] && [ "$(sha_of "$DAEMON_JSON")" != "$(cat "$STATE/daemon.json.sha256" 2>/dev/null)" ] \
      && ! cmp -s <(lab_daemon_json) "$DAEMON_JSON" && [ ! -e "$STATE/daemon.json.before" ]; then
      cp -p "$DAEMON_JSON" "$STATE/daemon.json.before"
      say "kept your $DAEMON_JSON aside in $STATE/daemon.json.before (down puts it back)"
    fi
    lab_daemon_json >"$DAEMON_JSON"
    sha_of "$DAEMON_JSON" >"$STATE/daemon.json.sha256"
    # dockerd sets the filter table's FORWARD policy to DROP when it starts: what it was before, for `down`
    [ -s "$STATE/forward-policy" ] || forward_policy >"$STATE/forward-policy"
    say "starting dockerd (data root $DOCKER_ROOT, log $LOGS/dockerd.log)"
    # fd 9 is a step's lock (see step): dockerd must not inherit it, or that step stays locked while it runs
    nohup dockerd --pidfile "$DOCKER_PID" >"$LOGS/dockerd.log" 2>&1 9>&- &
    # polled five times a second (at most 60 s): dockerd is usually up within one
    local i; for i in $(seq 1 300); do docker_up && break; sleep 0.2; done
    docker_up || die "dockerd did not answer within 60 s; see $LOGS/dockerd.log"
    say "docker $(docker version --format '{{.Server.Version}}') is up"
  fi
  block_egress
  lab_network kind --subnet "$KIND_SUBNET"
  say "kind network: $(network_subnets kind)"
  lab_network "$KIND_DUAL_NETWORK" --subnet "$KIND_DUAL_SUBNET" --ipv6 --subnet "$KIND_DUAL_SUBNET6"
  say "$KIND_DUAL_NETWORK network (the dual-stack profile's): $(network_subnets "$KIND_DUAL_NETWORK")"
  say "egress from containers is dropped (DOCKER-USER -o $(uplink) -j DROP; IPv6: FORWARD -o $(uplink) -j DROP); stop everything with: $0 down"
}

# lab_network NAME SUBNET-ARGS…: a bridge network of ours with the ranges given, no masquerading, MTU 1500;
# made once and marked in $STATE/NAME-network, so that `down` removes only a network `up` made.
lab_network() {
  local name=$1; shift
  docker network inspect "$name" >/dev/null 2>&1 && return 0
  echo "created by lab up on $(date -u +%FT%TZ) in $(docker info --format '{{.DockerRootDir}}' 2>/dev/null)" >"$STATE/$name-network"
  docker network create --driver bridge "$@" \
    -o com.docker.network.bridge.enable_ip_masquerade=false \
    -o com.docker.network.driver.mtu=1500 "$name" >/dev/null
}

network_subnets() { docker network inspect "$1" --format '{{range .IPAM.Config}}{{.Subnet}} {{end}}'; }

# The filter table's FORWARD policy (ACCEPT or DROP), as `iptables -S` prints it.
forward_policy() { { iptables -S 2>/dev/null || true; } | awk '$1 == "-P" && $2 == "FORWARD" { print $3; exit }'; }

uplink() { ip -o route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1)}' | head -n 1; }

# Nothing a container sends may leave through the host's uplink. The device is recorded: `down` removes the
# rule on the same device even when the default route has moved since.
block_egress() {
  local dev; dev=$(uplink)
  [ -n "$dev" ] || return 0
  mkdir -p "$STATE"; echo "$dev" >"$STATE/egress-dev"
  iptables -C DOCKER-USER -o "$dev" -j DROP 2>/dev/null || iptables -I DOCKER-USER -o "$dev" -j DROP
  # IPv6 (the dual-stack network): dockerd writes no ip6tables rules here ("ip6tables": false), so the block
  # goes in the filter table's FORWARD chain
  if command -v ip6tables >/dev/null; then
    ip6tables -C FORWARD -o "$dev" -j DROP 2>/dev/null || ip6tables -I FORWARD -o "$dev" -j DROP
  fi
}

# down's report: one line per item, what it removed and what it keeps and why.
removed() { say "removed: $*"; }
kept() { say "kept: $*"; }

# The chains dockerd creates in the host's filter and nat tables, and the rules of the built-in chains that lead
# to them or name docker's bridges (docker0, br-<network id>). dockerd leaves all of them when it stops.
docker_chains() { iptables -t "$1" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^DOCKER/ { print $2 }'; }
docker_jumps() {
  iptables -t "$1" -S 2>/dev/null | awk '$1 == "-A" && $2 !~ /^DOCKER/ && ($0 ~ / -j DOCKER/ || $0 ~ /(^| )(-i|-o) (docker0|br-[0-9a-f]+)( |$)/)'
}

remove_docker_iptables() {
  local t rule chain n
  for t in filter nat; do
    n=0
    while IFS= read -r rule; do
      [ -n "$rule" ] || continue
      # the rule's words as iptables -S printed them (quoted comments stay one word)
      eval "iptables -t $t ${rule/#-A/-D}" && n=$((n + 1))
    done < <(docker_jumps "$t")
    for chain in $(docker_chains "$t"); do
      iptables -t "$t" -F "$chain" && iptables -t "$t" -X "$chain" && removed "iptables chain $chain ($t table)"
    done
    [ "$n" -gt 0 ] && removed "$n rule(s) of the $t table's built-in chains that led to docker's chains or bridges"
  done
  return 0
}

# docker's bridges: docker0 and one br-<id> per network (kind's), left when dockerd stops; only empty ones go.
remove_docker_bridges() {
  local br
  for br in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1 | grep -E '^(docker0|br-[0-9a-f]{12})$' || true); do
    if [ -n "$(ip -o link show master "$br" 2>/dev/null)" ]; then kept "bridge $br: something is still attached to it"
    else ip link del "$br" && removed "bridge $br"
    fi
  done
}

cmd_down() {
  mkdir -p "$STATE"
  local lab_dockerd=0 stopped=0 pid dev
  pid=$(cat "$DOCKER_PID" 2>/dev/null || true)
  [ -n "$pid" ] && lab_dockerd=1
  if command -v kind >/dev/null && docker_up; then
    local c; for c in $(kind get clusters 2>/dev/null); do say "deleting kind cluster $c"; kind delete cluster --name "$c" && removed "kind cluster $c"; done
  fi
  # the kind network: on the lab's own docker it lives in the lab's data root (in the cache); on a docker that
  # was running already, lab up added it there, and it goes if nothing uses it
  local net
  for net in kind "$KIND_DUAL_NETWORK"; do
    [ -e "$STATE/$net-network" ] || continue
    if [ "$lab_dockerd" = 1 ]; then kept "docker network $net: it is in the lab's data root ($DOCKER_ROOT), unused while that docker is stopped; the next up reuses it"
    elif docker_up && docker network rm "$net" >/dev/null 2>&1; then removed "docker network $net"; rm -f "$STATE/$net-network"
    else kept "docker network $net: docker could not remove it (in use, or docker is not running)"
    fi
  done
  if [ -n "$pid" ] && running "$pid"; then
    say "stopping dockerd (pid $pid, started by lab up)"; kill "$pid"
    # polled five times a second (at most 30 s): a stopped dockerd is gone well within one
    local i; for i in $(seq 1 150); do running "$pid" || break; sleep 0.2; done
    if running "$pid"; then kept "dockerd (pid $pid): it did not stop within 30 s"
    else stopped=1; removed "dockerd (pid $pid)"; rm -f "$DOCKER_PID"
    fi
  elif [ -n "$pid" ]; then stopped=1; rm -f "$DOCKER_PID"
  elif docker_up; then kept "dockerd: lab up did not start it (it was running already), so down leaves it running"
  fi
  # the egress block: lab up added it, whoever started docker
  dev=$(cat "$STATE/egress-dev" 2>/dev/null || uplink)
  if [ -n "$dev" ] && iptables -C DOCKER-USER -o "$dev" -j DROP 2>/dev/null; then
    while iptables -D DOCKER-USER -o "$dev" -j DROP 2>/dev/null; do :; done
    removed "iptables rule DOCKER-USER -o $dev -j DROP (containers' egress block)"
  fi
  if [ -n "$dev" ] && command -v ip6tables >/dev/null && ip6tables -C FORWARD -o "$dev" -j DROP 2>/dev/null; then
    while ip6tables -D FORWARD -o "$dev" -j DROP 2>/dev/null; do :; done
    removed "ip6tables rule FORWARD -o $dev -j DROP (containers' IPv6 egress block)"
  fi
  rm -f "$STATE/egress-dev"
  # docker's own chains (DOCKER, DOCKER-USER, DOCKER-ISOLATION-STAGE-*) and bridges: only once the docker that
  # made them — the lab's — has stopped; a docker that runs on keeps using them
  if [ "$stopped" = 1 ]; then
    remove_docker_iptables
    remove_docker_bridges
    local was now; was=$(cat "$STATE/forward-policy" 2>/dev/null || true); now=$(forward_policy)
    if [ -n "$was" ]; then
      if [ -n "$now" ] && [ "$now" != "$was" ]; then
        iptables -P FORWARD "$was" && removed "the filter table's FORWARD policy $now that dockerd set (back to $was, as before lab up)"
      fi
      rm -f "$STATE/forward-policy"
    elif [ "$now" = DROP ]; then
      kept "the filter table's FORWARD policy DROP: dockerd sets it when it starts, and lab up did not record what it was before (an up from an older lab.sh), so down does not guess"
    fi
  elif [ -n "$(docker_chains filter)" ]; then
    # DOCKER-USER holds the users' own rules: empty (docker's lone RETURN) and with docker stopped, it goes too
    if ! docker_up && [ -z "$(iptables -S DOCKER-USER 2>/dev/null | grep -vE '^-N DOCKER-USER$|^-A DOCKER-USER -j RETURN$')" ] \
      && iptables -S DOCKER-USER >/dev/null 2>&1; then
      while iptables -D FORWARD -j DOCKER-USER 2>/dev/null; do :; done
      iptables -F DOCKER-USER && iptables -X DOCKER-USER && removed "iptables chain DOCKER-USER (empty, and docker is stopped)"
    fi
    kept "docker's iptables chains and bridges: $(if docker_up; then echo "the docker daemon running here (not started by lab up) keeps using them"; else echo "lab up did not start the docker that made them; it makes them again when it starts"; fi)"
  fi
  # daemon.json: the lab's (its recorded hash, or exactly what up writes) goes once the lab's docker is stopped;
  # one that was there before is put back; one changed since is kept
  if [ -e "$DAEMON_JSON" ]; then
    if [ "$(sha_of "$DAEMON_JSON")" = "$(cat "$STATE/daemon.json.sha256" 2>/dev/null)" ] || cmp -s <(lab_daemon_json) "$DAEMON_JSON"; then
      if docker_up; then kept "$DAEMON_JSON: the lab wrote it, but a docker daemon is still running with it"
      elif [ -e "$STATE/daemon.json.before" ]; then mv "$STATE/daemon.json.before" "$DAEMON_JSON"; removed "the lab's $DAEMON_JSON (yours from before lab up is back)"
      else rm -f "$DAEMON_JSON"; removed "$DAEMON_JSON (written by lab up)"
      fi
      rm -f "$STATE/daemon.json.sha256"
    else kept "$DAEMON_JSON: not the one lab up wrote (changed since, or someone else's)"
    fi
  fi
  # the runc wrapper: docker's default runtime while the lab's daemon.json is in place
  if [ -e "$RUNC_WRAPPER" ]; then
    if ! cmp -s "$HERE/files/runc-nosysres" "$RUNC_WRAPPER"; then kept "$RUNC_WRAPPER: not the lab's wrapper"
    elif [ -e "$DAEMON_JSON" ] && grep -q runc-nosysres "$DAEMON_JSON"; then kept "$RUNC_WRAPPER: $DAEMON_JSON still names it as docker's runtime"
    elif [ -e "$STATE/runc-wrapper.before" ]; then mv "$STATE/runc-wrapper.before" "$RUNC_WRAPPER"; removed "the lab's $RUNC_WRAPPER (the one from before lab up is back)"
    else rm -f "$RUNC_WRAPPER"; removed "$RUNC_WRAPPER (installed by lab up)"
    fi
  fi
  say "down (the cache stays in $LAB_CACHE)"
}

cmd_images() {
  ONLY=("$@")
  local t0=$SECONDS v w
  # a Cilium version's steps named: that version is built too, whether versions.env names it or not
  for w in "${ONLY[@]}"; do
    case "$w" in image-cilium-*) ask_cilium "${w#image-cilium-}" ;; cilium-*) ask_cilium "${w#cilium-}" ;; esac
  done
  for w in "${ONLY[@]}"; do
    lab_steps | grep -xF -- "$w" >/dev/null || die "unknown step '$w'; valid: $(lab_steps | tr '\n' ' ')"
  done
  wanted host-packages && step host-packages host_packages
  docker_up || cmd_up
  # Go builds first for the rootfs steps are mostly downloads; the order keeps both busy when run twice.
  wanted rootfs-base && STEP_INPUTS=$BASE_PACKAGES image_step rootfs-base "localhost/lab/rootfs-base:$DEBIAN_SUITE" rootfs base "$BASE_PACKAGES"
  wanted tools && step tools build_tools
  wanted kubernetes && step kubernetes build_kubernetes
  [ -x "$OUT/k8s/kubectl" ] && ln -sf "$OUT/k8s/kubectl" "$BIN/kubectl"
  wanted etcd && step etcd build_etcd
  wanted coredns && step coredns build_coredns
  wanted pause && step pause build_pause
  wanted rootfs-node && STEP_INPUTS=$NODE_PACKAGES image_step rootfs-node "localhost/lab/rootfs-node:$DEBIAN_SUITE" rootfs node "$NODE_PACKAGES"
  wanted rootfs-cilium && STEP_INPUTS=$CILIUM_PACKAGES image_step rootfs-cilium "localhost/lab/rootfs-cilium:$DEBIAN_SUITE" rootfs cilium "$CILIUM_PACKAGES"
  # an image's inputs are the images it is built from (by ID) and the build stamps of its binaries: a rebuilt
  # base or binary rebuilds what derives from it
  local b base node_inputs
  base="$(img_id "localhost/lab/rootfs-base:$DEBIAN_SUITE") $(stamp_of kubernetes)"
  for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
    wanted "image-$b" && STEP_INPUTS=$base image_step "image-$b" "registry.k8s.io/$b:$K8S_VERSION" image_component "$b"
  done
  wanted image-etcd && STEP_INPUTS="$base $(stamp_of etcd)" image_step image-etcd "registry.k8s.io/etcd:$ETCD_VERSION" image_etcd
  wanted image-coredns && STEP_INPUTS="$base $(stamp_of coredns)" image_step image-coredns "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" image_coredns
  wanted image-pause && STEP_INPUTS=$(stamp_of pause) image_step image-pause "registry.k8s.io/pause:$PAUSE_VERSION" image_pause
  wanted image-agnhost && STEP_INPUTS=$base image_step image-agnhost "$LAB_AGNHOST_IMAGE" image_agnhost
  wanted image-tools && STEP_INPUTS=$base image_step image-tools "$LAB_TOOLS_IMAGE" image_tools
  wanted image-node-base && STEP_INPUTS=$(img_id "localhost/lab/rootfs-node:$DEBIAN_SUITE") image_step image-node-base "localhost/lab/node-base:$DEBIAN_SUITE" image_node_base
  for v in $(cilium_versions); do
    wanted "cilium-$v" && step "cilium-$v" build_cilium "$v"
    wanted "image-cilium-$v" && STEP_INPUTS="$(img_id "localhost/lab/rootfs-cilium:$DEBIAN_SUITE") $base $(stamp_of "cilium-$v")" \
      image_step "image-cilium-$v" "$(lab_cilium_image "$v")" image_cilium "$v"
  done
  # last: the node image holds every image above (kubeadm's, the workloads', and the Cilium builds)
  node_inputs="$(img_id "localhost/lab/node-base:$DEBIAN_SUITE") $(stamp_of kubernetes)"
  for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do node_inputs+=" $(img_id "registry.k8s.io/$b:$K8S_VERSION")"; done
  for b in "registry.k8s.io/etcd:$ETCD_VERSION" "registry.k8s.io/coredns/coredns:$COREDNS_VERSION" "registry.k8s.io/pause:$PAUSE_VERSION" "$LAB_AGNHOST_IMAGE" "$LAB_TOOLS_IMAGE"; do
    node_inputs+=" $(img_id "$b")"
  done
  # the layout (image_node): the images unpacked in $OUT/node-store, which a rebuild of the node image rewrites; a
  # node image whose store is gone (out/ wiped, the image kept) links nowhere, so it is built again
  node_inputs+=" layout=node-store"
  [ -d "$OUT/node-store/root" ] || rm -f "$STAMPS/image-node"
  for v in $(cilium_versions); do node_inputs+=" $(img_id "$(lab_cilium_image "$v")") $(img_id "$(lab_operator_image "$v")")"; done
  wanted image-node && STEP_INPUTS=$node_inputs image_step image-node "$LAB_NODE_IMAGE" image_node
  say "images: finished in $(((SECONDS - t0) / 60)) min $(((SECONDS - t0) % 60)) s; cache $(du -sh "$LAB_CACHE" 2>/dev/null | cut -f1) in $LAB_CACHE"
}

cmd_status() {
  say "cache: $LAB_CACHE ($(du -sh "$LAB_CACHE" 2>/dev/null | cut -f1))"
  local f v; for f in "$STAMPS"/*; do [ -e "$f" ] && printf '  %-28s %s\n' "$(basename "$f")" "$(head -n 1 "$f")"; done
  # versions.env's, and every other one the lab was asked for (a stamp, or a failed attempt's log)
  for f in "$STAMPS"/cilium-* "$LOGS"/cilium-*.log; do
    [ -e "$f" ] || continue
    v=$(basename "$f"); v=${v#cilium-}; v=${v%.log}
    [[ $v =~ $CILIUM_VERSION_RE ]] && ask_cilium "$v"
  done
  say "Cilium versions: built (and what the lab changed in each), or not and why:"
  for v in $(cilium_versions); do
    local declared=" (clusters/lab/versions.env)"; case " $CILIUM_VERSIONS " in *" $v "*) ;; *) declared=" (asked for)" ;; esac
    if [ -e "$STAMPS/cilium-$v" ] && [ -e "$STAMPS/image-cilium-$v" ]; then printf '  %-12s built%s: %s\n' "$v" "$declared" "$(lab_patch_label "$v")"
    elif [ -s "$LOGS/cilium-$v.refused" ]; then printf '  %-12s not built%s: %s\n' "$v" "$declared" "$(awk 'NR > 1 { printf "; " } { printf "%s", $0 }' "$LOGS/cilium-$v.refused")"
    elif [ -e "$STAMPS/cilium-$v" ]; then printf '  %-12s binaries built, images not yet%s: %s\n' "$v" "$declared" "$(lab_patch_label "$v")"
    else printf '  %-12s not built%s; declared in cilium-deps.tsv: %s\n' "$v" "$declared" "$(awk -F'\t' -v v="$v" '$1 == v { printf "%sreplace %s: %s => %s", (n++ ? "; " : ""), $2, $3, $4 } END { if (!n) printf "no dependency replaced (a line of another version applies where this one pins the same)" }' "$HERE/cilium-deps.tsv")"; fi
  done
  if docker_up; then
    say "docker $(docker version --format '{{.Server.Version}}') is running; lab images:"
    docker images --format '  {{.Repository}}:{{.Tag}}  {{.Size}}' | grep -E 'localhost/lab|registry.k8s.io' || true
    command -v kind >/dev/null && { say "kind clusters:"; kind get clusters 2>/dev/null | sed 's/^/  /'; }
  else
    say "docker is not running (start it with: $0 up)"
  fi
}

# LAB_SH_FUNCTIONS=1: define the functions only (a test sources the script into a sandbox)
[ "${LAB_SH_FUNCTIONS:-}" = 1 ] && return 0

case "${1:-}" in
  images) shift; cmd_images "$@" ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  steps) shift; for v in "$@"; do ask_cilium "$v"; done; lab_steps ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
