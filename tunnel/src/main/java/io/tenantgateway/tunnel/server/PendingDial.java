package io.tenantgateway.tunnel.server;

/** A dial forwarded to an agent and not answered yet, keyed by its random. */
record PendingDial(long random, String address, AgentConnection agent, Frontend frontend) {
}
