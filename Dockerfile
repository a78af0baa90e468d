# syntax=docker/dockerfile:1
# tenant-gateway image: a drop-in konnectivity-agent (/proxy-agent) plus the tenant-gateway CLI, on a jlinked Java
# runtime that holds only the JDK modules the agent uses (agent/src/main/jlink/modules; RuntimeJlinkIT checks the
# list against jdeps and runs the agent on such a runtime).
#
# Build the jar first, then the image from the repository root (the context: it copies agent/target/tenant-gateway.jar,
# bin/ and agent/src/main/jlink/modules; version, revision and source become OCI labels), then push it where the
# nodes pull from and point the chart or kustomize at it (README.md, "Install"):
#   mvn -B package -DskipTests
#   docker build -t REGISTRY/tenant-gateway:TAG \
#     --build-arg VERSION=TAG --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg SOURCE="$(git remote get-url origin)" .
#   docker push REGISTRY/tenant-gateway:TAG
#
# Base images are pinned by digest (a tag can move; a digest cannot). To move to a newer one, resolve the tag's
# current digest (`docker buildx imagetools inspect eclipse-temurin:17-jdk-jammy`) and replace both parts here.
ARG JDK_IMAGE=eclipse-temurin:17-jdk-jammy@sha256:723151f3fc88ca2060153ee08ab8dbbea7983d6ed6f2622fe440acf178737c94
ARG BASE_IMAGE=ubuntu:22.04@sha256:a6d2b38300ce017add71440577d5b0a90460d0e57fd7aec21dd0d1b0761bbfb2

FROM ${JDK_IMAGE} AS runtime
COPY agent/src/main/jlink/modules /tmp/jlink-modules
# --generate-cds-archive: the runtime's own class-data archive of JDK classes (the agent's archive builds on it).
RUN jlink --add-modules "$(grep -v '^#' /tmp/jlink-modules | grep . | paste -sd, -)" \
      --strip-debug --no-man-pages --no-header-files --compress=2 --generate-cds-archive \
      --output /opt/java

FROM ${BASE_IMAGE}
ARG VERSION=0.1.0-SNAPSHOT
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="tenant-gateway" \
      org.opencontainers.image.description="Konnectivity agent and HAMi GPU-sharing gateway for Kamaji tenant clusters" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.base.name="ubuntu:22.04"

COPY --from=runtime /opt/java /opt/java
ENV JAVA_HOME=/opt/java PATH=/opt/java/bin:$PATH

# The runtime jar only: lab and bench (tools/target/tenant-gateway-tools.jar) are not for nodes. bin/tenant-gateway
# holds the agent's JVM options (the memory budget in agent/README.md); TENANT_GATEWAY_JVM_OPTS replaces them.
COPY agent/target/tenant-gateway.jar /opt/tenant-gateway/lib/tenant-gateway.jar
COPY bin/tenant-gateway bin/proxy-agent /opt/tenant-gateway/bin/
# Kamaji's DaemonSet runs the command /proxy-agent; tenant-gateway is on PATH. Both launchers follow these links to
# /opt/tenant-gateway/bin and find the jar in ../lib from there.
RUN ln -s /opt/tenant-gateway/bin/proxy-agent /proxy-agent \
 && ln -s /opt/tenant-gateway/bin/tenant-gateway /usr/local/bin/tenant-gateway
# The agent's class-data archive, made here because it belongs to this runtime and this jar's path, by the launcher
# as agent/pom.xml makes it: one real pure-tunnel `run` on loopback lists the classes it loads
# (tenant-gateway.classlist), then -Xshare:dump makes a static archive of those (tenant-gateway.jsa), which `run`
# maps instead of the runtime's own.
RUN /opt/tenant-gateway/bin/tenant-gateway cds-archive

# Non-root; the root file system can be read-only (only /tmp must be writable: mount an emptyDir there).
USER 65532:65532
ENTRYPOINT ["/opt/tenant-gateway/bin/tenant-gateway"]
CMD ["--help"]
