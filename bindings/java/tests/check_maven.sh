#!/usr/bin/env bash
# check_maven.sh: the test java_maven. polygpu.jar and polygpu-bundle.jar carry Maven's
# META-INF/maven/<groupId>/<artifactId>/pom.xml and pom.properties of this version, the sources
# jar holds every .java of the binding, and the Javadoc jar an index.html from a javadoc run that
# reported no error.
#   check_maven.sh <jar tool> <groupId> <artifactId> <version> <src dir> <work dir>
#                  <jar> <bundle jar> <sources jar> <javadoc jar> <javadoc log>
set -euo pipefail
jar=$1 group=$2 artifact=$3 version=$4 src=$5 work=$6
main_jar=$7 bundle_jar=$8 sources_jar=$9 javadoc_jar=${10} javadoc_log=${11}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
meta=META-INF/maven/$group/$artifact

for j in "$main_jar" "$bundle_jar"; do
  d=$work/$(basename "$j" .jar)
  mkdir -p "$d"
  (cd "$d" && "$jar" xf "$j" "$meta/pom.xml" "$meta/pom.properties")
  pom=$d/$meta/pom.xml props=$d/$meta/pom.properties
  [ -f "$pom" ] && [ -f "$props" ] || fail "$j lacks $meta/pom.xml or pom.properties"
  # The project's own coordinates: the first groupId/artifactId/version, those of no parent or
  # dependency (the pom has neither).
  for want in "<groupId>$group</groupId>" "<artifactId>$artifact</artifactId>" \
              "<version>$version</version>" "<packaging>jar</packaging>" \
              "<modelVersion>4.0.0</modelVersion>"; do
    grep -qF "$want" "$pom" || fail "$j: $meta/pom.xml lacks $want"
  done
  ! grep -qE '<(parent|dependencies)>' "$pom" || fail "$j: pom.xml names a parent or dependencies"
  head -c 5 "$pom" | grep -qF '<?xml' || fail "$j: pom.xml does not start with an XML declaration"
  for want in "groupId=$group" "artifactId=$artifact" "version=$version"; do
    grep -qxF "$want" "$props" || fail "$j: $meta/pom.properties lacks the line $want"
  done
done

# Every source file of the package, at its package path, and nothing compiled.
listing=$("$jar" tf "$sources_jar")
n=0
for f in "$src"/polygpu/*.java; do
  grep -qxF "polygpu/$(basename "$f")" <<<"$listing" || fail "$sources_jar lacks polygpu/$(basename "$f")"
  n=$((n + 1))
done
! grep -q '\.class$' <<<"$listing" || fail "$sources_jar holds .class files"

listing=$("$jar" tf "$javadoc_jar")
for want in index.html polygpu/Runtime.html polygpu/package-summary.html; do
  grep -qxF "$want" <<<"$listing" || fail "$javadoc_jar lacks $want"
done
[ -f "$javadoc_log" ] || fail "no javadoc log $javadoc_log"
if grep -E '(^|: )error:|^[0-9]+ errors?$' "$javadoc_log"; then
  fail "javadoc reported errors (above; all of its output in $javadoc_log)"
fi
warnings=$(grep -c 'warning' "$javadoc_log" || true)
echo "ok: $group:$artifact:$version in both jars, $n sources, javadoc with $warnings warning lines"
