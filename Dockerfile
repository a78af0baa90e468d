# tenant-gateway image: a drop-in konnectivity-agent (/proxy-agent) plus the tenant-gateway CLI.
# Build the jar first:  mvn -B package -DskipTests
# Then:                 docker build -t tenant-gateway:0.1.0 .
FROM eclipse-temurin:17-jre-jammy

# The launcher scripts are plain sh. JVM options keep the footprint small (serial GC, heap as a share of the
# container limit); bin/tenant-gateway adds C1-only compilation for short commands and keeps C2 for `run` (and
# `bench`, which measures it), where it cuts the agent's CPU per tunnelled byte by about 30 % (BENCHMARKS.md).
ENV TENANT_GATEWAY_JVM_OPTS="-XX:+UseSerialGC -XX:MaxRAMPercentage=60 -Xss512k -XX:+ExitOnOutOfMemoryError -Djava.io.tmpdir=/tmp -XX:-UsePerfData"

# The runtime jar only: lab and bench (tools/target/tenant-gateway-tools.jar) are not for nodes.
COPY agent/target/tenant-gateway.jar /opt/tenant-gateway/lib/tenant-gateway.jar
COPY bin/tenant-gateway bin/proxy-agent /opt/tenant-gateway/bin/
# Kamaji's DaemonSet runs the command /proxy-agent; tenant-gateway is on PATH. Both launchers follow these links to
# /opt/tenant-gateway/bin and find the jar in ../lib from there.
RUN ln -s /opt/tenant-gateway/bin/proxy-agent /proxy-agent \
 && ln -s /opt/tenant-gateway/bin/tenant-gateway /usr/local/bin/tenant-gateway

# Non-root; the root file system can be read-only (only /tmp must be writable: mount an emptyDir there).
USER 65532:65532
ENTRYPOINT ["/opt/tenant-gateway/bin/tenant-gateway"]
CMD ["--help"]
