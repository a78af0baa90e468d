package io.tenantgateway.agent.ops;

import static java.util.Objects.requireNonNull;

import io.tenantgateway.agent.cli.Durations;
import java.time.Duration;
import java.util.Locale;

/**
 * Every failure {@code probe} knows, mapped to why it happens and what to do next. Pure: input is the stage, the
 * error text as the server, agent, TLS stack or webhook reported it, and what the probe was pointed at.
 *
 * <p>The dial errors are matched on the texts the upstream Go agent and server send (and ours reproduces), so the
 * same explanations hold against upstream konnectivity-server and agents.
 */
public final class ProbeExplanations {

    /** Why it failed, and the next thing to check. */
    public record Explanation(String why, String next) {
        public Explanation {
            requireNonNull(why, "why");
            requireNonNull(next, "next");
        }
    }

    /**
     * What the probe was pointed at, for the sentences.
     *
     * @param server {@code unix:PATH} or {@code HOST:PORT}
     * @param unixSocket whether the server is reached over a Unix socket
     * @param target the dialled {@code host:port}
     * @param tlsName the name checked against the target's certificate
     * @param dialTimeout the client-side dial backstop
     * @param webhookPath the path posted to
     * @param clientCertificate whether the probe presents a client certificate to the server
     */
    public record Context(String server, boolean unixSocket, String target, String tlsName, Duration dialTimeout,
            String webhookPath, boolean clientCertificate) {
    }

    private ProbeExplanations() {
    }

    public static Explanation server(String error, Context context) {
        String lower = error.toLowerCase(Locale.ROOT);
        if (lower.contains("no such file") || lower.contains("does not exist")) {
            return new Explanation("the Unix socket " + context.server() + " does not exist: konnectivity-server is"
                    + " not running on this host, or it listens on another path",
                    "check the konnectivity-server container (on Kamaji the sidecar of the TenantControlPlane pod);"
                            + " --uds must equal the server's --uds-name and the udsName of kube-apiserver's"
                            + " EgressSelectorConfiguration");
        }
        if (lower.contains("permission denied")) {
            return new Explanation("this user may not open " + context.server(),
                    "run the probe as the user kube-apiserver runs as, or give it access to the socket's directory");
        }
        if (lower.contains("connection refused")) {
            return context.unixSocket()
                    ? new Explanation("the socket file " + context.server() + " exists but nothing accepts on it: a"
                            + " stale socket of a konnectivity-server that stopped",
                            "restart konnectivity-server (it recreates the socket) and check its log")
                    : new Explanation("nothing listens on " + context.server(),
                            "check that konnectivity-server runs with this frontend port (--server-port) and that"
                                    + " --server names the right host");
        }
        if (lower.contains("no answer within") || lower.contains("timed out") || lower.contains("timeout")) {
            return new Explanation("no answer from " + context.server() + ": packets are dropped on the way or the"
                    + " host is down", "check routes and firewall rules to the server's frontend port");
        }
        if (lower.contains("http-connect") || lower.contains("not a grpc")) {
            return new Explanation(error, "probe with the --mode the server runs with (kube-apiserver's"
                    + " EgressSelectorConfiguration names it: proxyProtocol GRPC or HTTPConnect)");
        }
        if (!context.clientCertificate() && (lower.contains("bad_certificate") || lower.contains("certificate_required")
                || lower.contains("certificate required"))) {
            return new Explanation("the server requires a client certificate and the probe presented none: " + error,
                    "pass --client-cert/--client-key: the pair kube-apiserver uses for this egress (tlsConfig of its"
                            + " EgressSelectorConfiguration), signed by the server's --server-ca-cert");
        }
        if (lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake")
                || lower.contains("ssl") || lower.contains("alert")) {
            return new Explanation("TLS with konnectivity-server failed: " + error,
                    "--server-ca must be the CA of the server's frontend certificate (--server-cert), the"
                            + " certificate must name the host in --server, and --client-cert/--client-key must be"
                            + " signed by the CA the server trusts for clients (--server-ca-cert)");
        }
        if (lower.contains("no such host") || lower.contains("unknownhost") || lower.contains("name or service")) {
            return new Explanation("the host in --server cannot be resolved", "check the name and this host's DNS");
        }
        return new Explanation("cannot connect to konnectivity-server at " + context.server() + ": " + error,
                "check that the server runs and that --uds/--server point at its frontend");
    }

    public static Explanation dial(String error, Context context) {
        String lower = error.toLowerCase(Locale.ROOT);
        if (lower.contains("no agent available")) {
            return new Explanation("the server answered the dial itself: no agent is connected to this server replica"
                    + " (or none matches its --proxy-strategies for this address)",
                    "on the tenant's nodes check the agent's /readyz (server-connected) and its log, or run"
                            + " 'tenant-gateway doctor' there with the agent's flags: with token auth the token's"
                            + " audience must be system:konnectivity-server and its service account"
                            + " kube-system/konnectivity-agent; the agent must dial this server's address and trust"
                            + " its CA; with several server replicas each agent must reach every replica"
                            + " (servers' --server-count = replicas)");
        }
        if (lower.contains("backstop") || lower.contains("dial timeout")) {
            return new Explanation("no DIAL_RSP within " + Durations.format(context.dialTimeout()) + ": the server"
                    + " gave the dial to an agent that never answered (a stalled or half-dead agent connection, or an"
                    + " agent starved of CPU); agents answer a failed dial within their own 5 s dial timeout, so this"
                    + " points at the agent's stream, not at the target",
                    "find the dial in the agent's log (-v=4) and its konnectivity_network_proxy_agent_dial_duration"
                            + "_seconds metric; give the agent CPU requests/limits; restart the agent on the node"
                            + " whose stream is stuck");
        }
        if (lower.contains("connection refused")) {
            return new Explanation("an agent reached " + host(context.target()) + " but nothing listens on port "
                    + port(context.target()) + " there: the webhook pod is down, the Service port/targetPort is"
                    + " wrong, or the Service has no ready endpoints",
                    "kubectl get endpoints for the webhook Service; check the webhook pod and its port; the agent"
                            + " dials from its node, so " + context.target() + " must be reachable from there");
        }
        if (lower.contains("i/o timeout")) {
            return new Explanation("the agent could not connect to " + context.target() + " within its dial timeout:"
                    + " packets are dropped (NetworkPolicy, firewall) or the node has no route to that address",
                    "from the node: nc -vz " + host(context.target()) + " " + port(context.target())
                            + "; check kube-proxy rules for the ClusterIP and NetworkPolicies in front of the webhook");
        }
        if (lower.contains("no such host") || lower.contains("lookup")) {
            return new Explanation("the agent could not resolve " + host(context.target()) + ": agents resolve with"
                    + " the node's DNS, which usually does not know cluster names",
                    "dial the Service's ClusterIP, as kube-apiserver does for service-referenced webhooks, or a name"
                            + " the node can resolve");
        }
        if (lower.contains("denied by policy (agent admin port)")) {
            return new Explanation("the agent never dials its own admin port (thread dumps, heap histograms) on an"
                    + " address of its node, whatever --dial-allow says",
                    "read the admin port on the node itself: kubectl port-forward to the agent pod, or"
                            + " 'tenant-gateway doctor' there; through the tunnel, dial the webhook or health port");
        }
        if (lower.contains("denied by policy (default: loopback)")) {
            return new Explanation("the agent denies loopback (127.0.0.0/8, ::1, localhost, 0.0.0.0) by default:"
                    + " through it the control plane would reach every node-local service",
                    "dial the Service's ClusterIP or the pod IP instead; if the target really listens on the"
                            + " node's loopback, start the agent with --dial-allow=127.0.0.0/8 (add ::1 for IPv6;"
                            + " its admin port stays closed)");
        }
        if (lower.contains("denied by policy (default: link-local)")) {
            return new Explanation("the agent denies link-local addresses (169.254.0.0/16, fe80::/10) by default:"
                    + " they hold the cloud metadata service (169.254.169.254) and its credentials",
                    "if this target is wanted, name it on the agent: --dial-allow="
                            + host(context.target()).replaceAll("^\\[|%.*$|]$", "")
                            + " (only that address opens)");
        }
        if (lower.contains("denied by policy")) {
            return new Explanation("the agent's dial policy refused " + context.target()
                    + ruleOf(error), "on the agent, add the address to --dial-allow (CIDR, host pattern or port:N"
                            + " rule) or remove the --dial-deny rule that matches it");
        }
        if (lower.contains("ssl") || lower.contains("certificate") || lower.contains("tls")) {
            return new Explanation("the server's TLS refused this client after the handshake: " + error,
                    "--client-cert/--client-key must be signed by the CA the server trusts for clients (its"
                            + " --server-ca-cert), as kube-apiserver's egress configuration does");
        }
        if (lower.contains("invalid version format") || lower.contains("invalid http")
                || lower.contains("closed before an answer")) {
            return new Explanation("the server did not answer the CONNECT request (" + error + "): it runs --mode"
                    + " grpc, or something in between drops HTTP/1.1", "probe with --mode grpc");
        }
        if (lower.contains("agent disconnected")) {
            return new Explanation("the agent chosen for this dial disconnected before it answered",
                    "check the agents' restarts and logs, then probe again");
        }
        return new Explanation("the dial failed: " + error,
                "the text comes from the server or the agent that dialled; look for it in the agent's log");
    }

    /** The rule in {@code dial to … denied by policy (RULE)}, as {@code " (rule: RULE)"}, or "". */
    private static String ruleOf(String error) {
        int open = error.lastIndexOf("denied by policy (");
        if (open < 0 || !error.endsWith(")")) {
            return "";
        }
        return " (rule: " + error.substring(open + "denied by policy (".length(), error.length() - 1) + ")";
    }

    public static Explanation tls(ChainCheck.Problem problem, String error, Context context) {
        if (problem != null) {
            return switch (problem) {
                case NAME_MISMATCH -> new Explanation(error + ": kube-apiserver would reject it ('x509: certificate"
                        + " is valid for …, not " + context.tlsName() + "')",
                        "reissue the webhook certificate with the DNS name " + context.tlsName() + " (tenant-gateway"
                                + " certs init --webhook-dns " + context.tlsName() + "), or probe with the name"
                                + " kube-apiserver uses: <service>.<namespace>.svc");
                case UNTRUSTED -> new Explanation(error + ": a caBundle with that CA would not verify it either",
                        "put the CA that signed the webhook certificate into the MutatingWebhookConfiguration's"
                                + " caBundle (tenant-gateway certs inject-ca-bundle, or run the agent with"
                                + " --manage-webhook-config)");
                case EXPIRED -> new Explanation(error, "renew the webhook certificate; the agent reloads it from the"
                        + " files (or the Secret) without a restart");
                case NOT_YET_VALID -> new Explanation(error, "fix the clock of the host that issued the"
                        + " certificate or of this host (NTP)");
                case NO_CERTIFICATE -> new Explanation("the target presented no certificate",
                        "the target is not a TLS server with a certificate; check --target");
            };
        }
        String lower = error.toLowerCase(Locale.ROOT);
        if (lower.contains("not an ssl/tls record") || lower.contains("unrecognized ssl message")
                || lower.contains("plaintext")) {
            return new Explanation("the target does not speak TLS on " + context.target(),
                    "check the port: webhooks serve HTTPS (the agent's --webhook-listen defaults to 9443, the"
                            + " Service to 443)");
        }
        if (lower.contains("certificate required") || lower.contains("certificate_required")) {
            return new Explanation("the target requires a client certificate (the agent runs with"
                    + " --webhook-client-ca)", "the probe presents none; check that kube-apiserver has a client"
                    + " certificate for this webhook (AdmissionConfiguration kubeConfigFile)");
        }
        return new Explanation("the TLS handshake with " + context.target() + " failed: " + error,
                "check that " + context.target() + " is the webhook's HTTPS port and look at the webhook's log");
    }

    /** The HTTP exchange failed or did not return an AdmissionReview. */
    public static Explanation webhook(String error, Context context) {
        String lower = error.toLowerCase(Locale.ROOT);
        if (lower.startsWith("http 404")) {
            return new Explanation("nothing serves " + context.webhookPath() + " on the target",
                    "use the path of the webhook configuration (HAMi and tenant-gateway: /webhook) with --webhook");
        }
        if (lower.contains("no answer within")) {
            return new Explanation("the webhook did not answer in time; kube-apiserver gives up after the webhook's"
                    + " timeoutSeconds (10 s) and, with failurePolicy Ignore (HAMi's default), admits the pod"
                    + " un-mutated", "check the webhook's log and latency (and its --upstream, if it forwards)");
        }
        if (lower.startsWith("http ")) {
            return new Explanation("the webhook answered " + error,
                    "kube-apiserver treats this as a failed call (failurePolicy decides); check the webhook's log");
        }
        return new Explanation("the answer is not a usable AdmissionReview: " + error,
                "check that the target is an admission webhook (HAMi's, or tenant-gateway's) and its log");
    }

    /** The webhook answered {@code allowed: false}. */
    public static Explanation refused(int code, String message) {
        String lower = message.toLowerCase(Locale.ROOT);
        String next;
        if (lower.contains("node assigned")) {
            next = "the pod sets spec.nodeName; pods asking for GPUs must be placed by hami-scheduler, so remove"
                    + " nodeName";
        } else if (lower.contains("quota")) {
            next = "the namespace's ResourceQuota (limits.nvidia.com/gpumem, limits.nvidia.com/gpucores) is used up;"
                    + " raise it or ask for less";
        } else if (lower.contains("privileged")) {
            next = "HAMi v2.10 refuses privileged containers that ask for GPUs; drop privileged or run with"
                    + " --hami-compat v2.9";
        } else if (lower.contains("no containers")) {
            next = "the pod sent has no containers; fix the --pod file";
        } else if (code != 403) {
            next = "the webhook could not decide; check its log (with --upstream and fail-closed, the upstream"
                    + " may be down)";
        } else {
            next = "read the message: it is the webhook's policy; send another pod with --pod FILE to compare";
        }
        String why = (code == 403 ? "the webhook denied the pod" : "the webhook errored (code " + code + ")")
                + (message.isEmpty() ? "" : ": " + message) + "; the tunnel and TLS work, this is the webhook's"
                + " answer";
        return new Explanation(why, next);
    }

    private static String host(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return colon < 0 ? hostPort : hostPort.substring(0, colon);
    }

    private static String port(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        return colon < 0 ? "?" : hostPort.substring(colon + 1);
    }
}
