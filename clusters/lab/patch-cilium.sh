#!/usr/bin/env bash
# The one change the lab may make to Cilium's code: on a kernel built without loadable modules there is no
# /proc/modules, and Cilium versions that still have the kernel-module manager
# (pkg/datapath/linux/modules/modules_linux.go, cilium issue 31795) fail at start when it is missing. For those,
# a missing /proc/modules is read as "no modules loaded". Versions without a /proc/modules reader are left as
# they are. The first line printed is the label the images and every bundle recorded with them carry.
set -euo pipefail
src=$1
f="$src/pkg/datapath/linux/modules/modules_linux.go"
readers=$(grep -rl --include='*.go' --exclude='*_test.go' '/proc/modules' "$src/pkg" "$src/daemon" 2>/dev/null || true)
if [ -z "$readers" ]; then
  echo "none: this Cilium version does not read /proc/modules; its code is built unchanged"
  exit 0
fi
if [ "$readers" != "$f" ] || ! grep -q 'os.Open(loadedModulesFilepath)' "$f"; then
  echo "refused: /proc/modules is read by code the lab's patch does not know: $readers" >&2
  exit 1
fi
perl -0pi -e 's/(\t(\w+), err := os\.Open\(loadedModulesFilepath\)\n\tif err != nil \{\n)/$1\t\tif os.IsNotExist(err) {\n\t\t\treturn nil, nil \/\/ lab patch: no \/proc\/modules, no loadable modules\n\t\t}\n/' "$f"
grep -q 'lab patch: no /proc/modules' "$f" || { echo "refused: listLoadedModules has another shape in $f" >&2; exit 1; }
echo "proc-modules: a missing /proc/modules is read as no loaded modules (pkg/datapath/linux/modules)"
