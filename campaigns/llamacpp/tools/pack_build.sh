#!/usr/bin/env bash
# On the H200 machine, after build.sh: pack the built llama_cpp package (each library once, the .so names as
# links) into $OUT as parts of at most 15 MiB, so that a later sitting carries it (.llb/) instead of building it
# again (about 8 minutes). Here, copy $OUT's llb.* files into an ignored .llb/ and name .llb in carry.
# Usage: bash campaigns/llamacpp/tools/pack_build.sh
set -euo pipefail
test -f /tmp/site/.llama-ready || { echo "no finished build in /tmp/site: run build.sh first"; exit 1; }
rm -rf /tmp/pk && mkdir -p /tmp/pk
cp -a /tmp/site/llama_cpp /tmp/site/llama_cpp_python-*.dist-info /tmp/pk/
cd /tmp/pk/llama_cpp/lib
for f in libggml*.so.0 libllama.so.0; do
  [ -e "$f" ] || continue
  base=${f%.0}
  for dup in "$base" "$base".0.*; do [ -e "$dup" ] && [ "$dup" != "$f" ] && cmp -s "$dup" "$f" && rm -f "$dup"; done
  [ -e "$base" ] || ln -s "$f" "$base"
done
cd /tmp/pk && find . -name __pycache__ -prune -exec rm -rf {} +
tar -cf - llama_cpp llama_cpp_python-*.dist-info | xz -T0 -6 > /tmp/llb.tar.xz
split -b 15M -d /tmp/llb.tar.xz "$OUT/llb.tar.xz.part"
(cd /tmp && sha256sum llb.tar.xz) > "$OUT/llb.sha256"
ls -la "$OUT"
