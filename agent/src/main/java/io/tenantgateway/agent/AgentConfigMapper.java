package io.tenantgateway.agent;

import io.tenantgateway.agent.deviceplugin.DevicePluginSettings;
import io.tenantgateway.agent.webhook.ManagedWebhookConfiguration;
import io.tenantgateway.agent.webhook.WebhookSettings;
import io.tenantgateway.agent.devices.DeviceRegistrationConfig;
import io.tenantgateway.agent.devices.MockInventory;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.agent.deviceplugin.AllocatorConfig;
import io.tenantgateway.deviceplugin.DevicePluginConfig;
import io.tenantgateway.deviceplugin.policy.HamiCoreSettings;
import io.tenantgateway.webhook.policy.DeviceConfig;
import io.tenantgateway.agent.locks.AllocationMode;
import io.tenantgateway.agent.logging.LogSetup;
import io.tenantgateway.agent.webhook.WebhookCertificatesConfig;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.TunnelConfig;
import io.tenantgateway.tunnel.policy.DialPolicy;
import io.tenantgateway.tunnel.protocol.AgentIdentifiers;
import io.tenantgateway.tunnel.protocol.IpLiteral;
import io.tenantgateway.webhook.WebhookConfig;
import io.tenantgateway.webhook.policy.HamiCompat;
import io.tenantgateway.webhook.policy.PolicyConfig;
import io.tenantgateway.webhook.proxy.FailurePolicy;
import io.tenantgateway.webhook.proxy.UpstreamConfig;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** Maps {@link AgentCommand}'s flags onto {@link AgentConfig}; every error names the flag. */
final class AgentConfigMapper {
    private AgentConfigMapper() {
    }

    static AgentConfig map(AgentCommand c) {
        checkAcceptedFlags(c);
        TunnelConfig tunnel = tunnel(c);
        Optional<String> nodeName = Optional.ofNullable(c.nodeName).map(String::strip).filter(s -> !s.isEmpty());

        Optional<WebhookSettings> webhook = webhook(c);
        if (c.webhookTlsSelfManaged && webhook.isEmpty()) {
            webhookCertificates(c); // names the missing --webhook-tls-secret
            throw new IllegalArgumentException("--webhook-tls-self-managed: true with the webhook off (expected:"
                    + " --enable-webhook=true, or drop --webhook-tls-self-managed)");
        }
        Optional<DeviceRegistrationConfig> devices = devices(c, nodeName);
        Optional<DevicePluginSettings> devicePlugin = devicePlugin(c, nodeName, devices);
        boolean lockController = c.enableLockController != null ? c.enableLockController : devices.isPresent();
        Optional<AllocationConfig> allocation = Optional.empty();
        if (lockController) {
            String node = nodeName.orElseThrow(() -> new IllegalArgumentException(
                    "--enable-lock-controller: no node name (expected: --node-name or env NODE_NAME)"));
            AllocationMode mode = c.allocationMode != null ? AllocationMode.parse(c.allocationMode)
                    : devicePlugin.isPresent() ? AllocationMode.DEVICE_PLUGIN : AllocationMode.OBSERVE;
            if (mode == AllocationMode.DEVICE_PLUGIN && devicePlugin.isEmpty()) {
                throw new IllegalArgumentException("--allocation-mode: device-plugin without --device-plugin=on"
                        + " (expected: observe, or --device-plugin=on)");
            }
            allocation = Optional.of(AllocationConfig.defaults(node).withMode(mode)
                    .withNodeLockTimeout(GoDuration.parse("--node-lock-timeout", c.nodeLockTimeout))
                    .withPodFieldSelector(c.podFieldSelector));
        }

        Optional<ManagedWebhookConfiguration> managed = Optional.empty();
        if (c.manageWebhookConfig) {
            Path caBundle = c.webhookCaBundle;
            if (caBundle == null && c.webhookTlsCert != null) {
                Path sibling = c.webhookTlsCert.resolveSibling("ca.crt");
                caBundle = Files.exists(sibling) ? sibling : null;
            }
            if (caBundle == null && c.webhookTlsSecret == null) {
                throw new IllegalArgumentException("--manage-webhook-config: no CA bundle (expected: --webhook-ca-bundle,"
                        + " a ca.crt next to --webhook-tls-cert, or --webhook-tls-secret with a ca.crt key)");
            }
            managed = Optional.of(new ManagedWebhookConfiguration(c.webhookConfigName,
                    Optional.ofNullable(caBundle == null ? null : requireFile("--webhook-ca-bundle", caBundle))));
        }
        AgentConfig.Servers servers = new AgentConfig.Servers(c.healthServerHost, c.healthServerPort,
                c.adminBindAddress, c.adminServerPort, optionalFile("--kubeconfig", c.kubeconfig));
        // The placeholder checks the parts' flags before the name is discovered; the agent itself has none yet.
        Optional<String> agentNode = nodeName.filter(name -> !name.equals(AgentCommand.PENDING_NODE_NAME));
        return new AgentConfig(tunnel, servers, LogSetup.Format.parse(c.logFormat), c.verbosity, agentNode, webhook, devices,
                allocation, managed, GoDuration.parse("--shutdown-grace", c.shutdownGrace), c.enableProfiling,
                c.enableContentionProfiling, devicePlugin);
    }

    /**
     * The flags accepted but not implemented yet still get upstream's (klog's, pflag's) syntax check, so a value
     * the upstream agent would refuse is refused here too.
     */
    private static void checkAcceptedFlags(AgentCommand c) {
        if (!List.of("", "default", "max").contains(c.serverCountSource)) {
            throw new IllegalArgumentException("--server-count-source: " + c.serverCountSource
                    + " (expected: default or max)");
        }
        if (c.logFileMaxSize < 0) {
            throw new IllegalArgumentException("--log-file-max-size: " + c.logFileMaxSize + " (expected: >= 0, in MB)");
        }
        severity(c.stderrThreshold);
        if (!c.logBacktraceAt.isEmpty() && !c.logBacktraceAt.matches("[^:]*:[0-9]+")) {
            throw new IllegalArgumentException("--log-backtrace-at: " + c.logBacktraceAt
                    + " (expected: FILE:LINE, e.g. client.go:210)");
        }
        if (!c.vmodule.isEmpty() && !c.vmodule.matches("[^,=]+=[0-9]+(,[^,=]+=[0-9]+)*")) {
            throw new IllegalArgumentException("--vmodule: " + c.vmodule
                    + " (expected: comma-separated PATTERN=N, e.g. client*=5,server=3)");
        }
        if (GoDuration.parse("--log-flush-frequency", c.logFlushFrequency).isNegative()) {
            throw new IllegalArgumentException("--log-flush-frequency: " + c.logFlushFrequency + " (expected: >= 0)");
        }
    }

    /** klog's {@code --stderrthreshold}: a severity name or its number, as a number (INFO 0 .. FATAL 3). */
    static int severity(String value) {
        List<String> names = List.of("INFO", "WARNING", "ERROR", "FATAL");
        String text = value.strip().toUpperCase(java.util.Locale.ROOT);
        int index = names.indexOf(text);
        if (index >= 0) {
            return index;
        }
        if (text.matches("[0-3]")) {
            return Integer.parseInt(text);
        }
        throw new IllegalArgumentException("--stderrthreshold: " + value
                + " (expected: INFO, WARNING, ERROR, FATAL or 0-3)");
    }

    private static TunnelConfig tunnel(AgentCommand c) {
        String agentId = c.agentId == null || c.agentId.isBlank() ? UUID.randomUUID().toString() : c.agentId.strip();
        return TunnelConfig.builder()
                .proxyServerHost(c.proxyServerHost)
                .proxyServerPort(c.proxyServerPort)
                .caCert(optionalFile("--ca-cert", c.caCert))
                .agentCert(optionalFile("--agent-cert", c.agentCert))
                .agentKey(optionalFile("--agent-key", c.agentKey))
                .alpnProtos(c.alpnProtos)
                // The token file is re-read on every attempt and may appear later (projected volume): not checked here.
                .serviceAccountTokenPath(c.serviceAccountTokenPath)
                .agentId(agentId)
                .agentIdentifiers(AgentIdentifiers.parse(c.agentIdentifiers))
                .syncInterval(GoDuration.parse("--sync-interval", c.syncInterval))
                .syncIntervalCap(GoDuration.parse("--sync-interval-cap", c.syncIntervalCap))
                .probeInterval(GoDuration.parse("--probe-interval", c.probeInterval))
                .syncForever(c.syncForever)
                .keepaliveTime(GoDuration.parse("--keepalive-time", c.keepaliveTime))
                .xfrChannelSize(c.xfrChannelSize)
                .countServerLeases(c.countServerLeases)
                .leaseNamespace(c.leaseNamespace)
                .leaseLabelSelector(c.leaseLabelSelector)
                .dialTimeout(GoDuration.parse("--dial-timeout", c.dialTimeout))
                .dialPolicy(dialPolicy(c.dialAllow, c.dialDeny, c.adminBindAddress, c.adminServerPort))
                .flowControl(c.flowControl)
                .maxDialsInFlight(c.maxDialsInFlight)
                .build();
    }

    /**
     * A rule is a CIDR or IP ({@code 10.96.0.0/12}, {@code 10.0.0.1}), a host pattern ({@code *.svc}), or a port
     * ({@code port:443}, {@code port:8000-8999}). The agent's defaults ({@link DialPolicy.Defaults#agent}) always
     * apply: its admin port on this host is never dialled, loopback and link-local only where an allow entry names
     * them. {@code adminPort} 0 is set by {@link Agent} once the admin server is bound; a specific
     * {@code --admin-bind-address} counts as an address of this host.
     */
    static DialPolicy dialPolicy(List<String> allow, List<String> deny, String adminBindAddress, int adminPort) {
        List<List<String>> allowParts = split("--dial-allow", allow);
        List<List<String>> denyParts = split("--dial-deny", deny);
        DialPolicy rules;
        try {
            rules = DialPolicy.of(allowParts.get(0), denyParts.get(0), allowParts.get(1), denyParts.get(1),
                    allowParts.get(2), denyParts.get(2));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--dial-allow/--dial-deny: " + e.getMessage(), e);
        }
        DialPolicy.Defaults defaults = DialPolicy.Defaults.agent(adminPort >= 0 && adminPort <= 65535 ? adminPort : 0);
        java.net.InetAddress bind = adminBindAddress == null ? null
                : IpLiteral.parseOrNull(adminBindAddress.strip().replaceAll("^\\[(.*)]$", "$1"));
        if (bind != null && !bind.isLoopbackAddress() && !bind.isAnyLocalAddress()) {
            defaults = defaults.withHostAddresses(List.of(bind));
        }
        return rules.withDefaults(defaults);
    }

    private static List<List<String>> split(String flag, List<String> rules) {
        List<String> cidrs = new ArrayList<>();
        List<String> hosts = new ArrayList<>();
        List<String> ports = new ArrayList<>();
        for (String raw : rules) {
            String rule = raw.strip();
            if (rule.isEmpty()) {
                continue;
            }
            if (rule.startsWith("port:")) {
                ports.add(rule.substring("port:".length()));
            } else if (rule.contains("/") || rule.contains(":") || rule.matches("[0-9.]+")) {
                cidrs.add(rule.contains("/") ? rule : rule + (rule.contains(":") ? "/128" : "/32"));
            } else {
                hosts.add(rule);
            }
        }
        try {
            // Validate each group now so the message names the flag that held the bad rule.
            DialPolicy.of(cidrs, List.of(), hosts, List.of(), ports, List.of());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
        }
        return List.of(cidrs, hosts, ports);
    }

    private static Optional<WebhookSettings> webhook(AgentCommand c) {
        boolean enabled = c.enableWebhook != null ? c.enableWebhook
                : c.webhookTlsCert != null || c.webhookTlsSecret != null;
        if (!enabled) {
            return Optional.empty();
        }
        if ((c.webhookTlsCert == null || c.webhookTlsKey == null) && c.webhookTlsSecret == null) {
            throw new IllegalArgumentException("--enable-webhook: no serving certificate (expected: --webhook-tls-cert"
                    + " and --webhook-tls-key, or --webhook-tls-secret)");
        }
        String[] hostPort = hostPort("--webhook-listen", c.webhookListen);
        PolicyConfig policy = new PolicyConfig(c.schedulerName, c.forceOverwriteDefaultScheduler,
                HamiCompat.parse(c.hamiCompat));
        if (c.webhookMaxConnections < 1) {
            throw new IllegalArgumentException("--webhook-max-connections: " + c.webhookMaxConnections
                    + " (expected: >= 1)");
        }
        WebhookConfig.Builder config = WebhookConfig.builder().host(hostPort[0]).port(Integer.parseInt(hostPort[1]))
                .policy(policy)
                .limits(io.tenantgateway.certs.vertx.ServerLimits.DEFAULTS.withMaxConnections(c.webhookMaxConnections))
                .clientAuth(c.webhookClientCa == null ? io.tenantgateway.certs.ClientAuthMode.NONE
                        : io.tenantgateway.certs.ClientAuthMode.REQUIRE);
        Optional<Path> upstreamCa = Optional.empty();
        if (c.upstream != null) {
            URI url;
            try {
                url = new URI(c.upstream);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("--upstream: " + c.upstream + " (expected: an https:// URL)", e);
            }
            if (c.upstreamCa == null) {
                throw new IllegalArgumentException("--upstream: " + url + " without --upstream-ca (expected: the CA"
                        + " of the upstream webhook)");
            }
            upstreamCa = Optional.of(requireFile("--upstream-ca", c.upstreamCa));
            config.upstream(new UpstreamConfig(url, UpstreamConfig.DEFAULT_PATH,
                    GoDuration.parse("--upstream-timeout", c.upstreamTimeout),
                    FailurePolicy.parse(c.upstreamFailurePolicy)));
        }
        // --device-config FILE wins over the ConfigMap; "" turns the watch off.
        Optional<String> deviceConfigMap = Optional.empty();
        if (c.deviceConfig == null && c.deviceConfigMap != null && !c.deviceConfigMap.isBlank()) {
            String value = c.deviceConfigMap.strip();
            io.tenantgateway.agent.webhook.DeviceConfigWatch.splitName(value);
            deviceConfigMap = Optional.of(value);
        }
        return Optional.of(new WebhookSettings(config.build(),
                Optional.ofNullable(optionalFile("--webhook-tls-cert", c.webhookTlsCert)),
                Optional.ofNullable(optionalFile("--webhook-tls-key", c.webhookTlsKey)),
                Optional.ofNullable(c.webhookTlsSecret),
                Optional.ofNullable(optionalFile("--webhook-client-ca", c.webhookClientCa)),
                Optional.ofNullable(optionalFile("--device-config", c.deviceConfig)), upstreamCa, deviceConfigMap,
                webhookCertificates(c)));
    }

    /** {@code --webhook-tls-self-managed} and its settings; the flags are checked only when it is on. */
    private static Optional<WebhookCertificatesConfig> webhookCertificates(AgentCommand c) {
        if (!c.webhookTlsSelfManaged) {
            return Optional.empty();
        }
        if (c.webhookTlsSecret == null) {
            throw new IllegalArgumentException("--webhook-tls-self-managed: true without --webhook-tls-secret"
                    + " (expected: --webhook-tls-secret=NAMESPACE/NAME, the Secret the agents keep the certificates"
                    + " in, e.g. kube-system/tenant-gateway-webhook-tls)");
        }
        return Optional.of(WebhookCertificatesConfig.parse(c.webhookTlsSecret, c.webhookService,
                c.webhookTlsValidity, c.webhookTlsRenewBefore, c.webhookCaValidity, c.webhookCaOverlap));
    }

    private static Optional<DeviceRegistrationConfig> devices(AgentCommand c, Optional<String> nodeName) {
        DeviceRegistrationConfig.Source source = DeviceRegistrationConfig.Source.parse(c.deviceSource);
        if (source == DeviceRegistrationConfig.Source.NONE) {
            return Optional.empty();
        }
        String node = nodeName.orElseThrow(() -> new IllegalArgumentException("--device-source: " + c.deviceSource
                + " without a node name (expected: --node-name or env NODE_NAME)"));
        // The same device-config HAMi's plugin reads: split count (unless the flag says otherwise) and, for real
        // GPUs, the memory and core scaling of the register annotation.
        DeviceConfig deviceConfig = c.deviceConfig == null ? DeviceConfig.defaults()
                : DeviceConfig.load(requireFile("--device-config", c.deviceConfig));
        long split = c.deviceSplitCount != null ? c.deviceSplitCount : deviceConfig.nvidia().deviceSplitCount();
        if (split < 1 || split > Integer.MAX_VALUE) {
            throw new IllegalArgumentException((c.deviceSplitCount != null ? "--device-split-count: "
                    : "--device-config: nvidia.deviceSplitCount: ") + split + " (expected: > 0)");
        }
        DeviceRegistrationConfig.Builder builder = DeviceRegistrationConfig.builder(node)
                .splitCount((int) split)
                .memoryScaling(deviceConfig.nvidia().deviceMemoryScaling())
                .coreScaling(deviceConfig.nvidia().deviceCoreScaling())
                .handshakeInterval(GoDuration.parse("--handshake-interval", c.handshakeInterval))
                .deregisterOnExit(c.deregisterOnExit);
        if (source == DeviceRegistrationConfig.Source.MOCK) {
            builder.mock(mockInventory(c));
        } else {
            builder.source(source).nvidiaSmiPath(c.nvidiaSmiPath);
        }
        if (c.advertiseGpuCapacity != null) {
            builder.advertiseCapacity(c.advertiseGpuCapacity);
        }
        return Optional.of(builder.build());
    }

    /** {@code --device-plugin=on|off}: the resource name and HAMi's scaling come from {@code --device-config}. */
    private static Optional<DevicePluginSettings> devicePlugin(AgentCommand c, Optional<String> nodeName,
            Optional<DeviceRegistrationConfig> devices) {
        boolean on = switch (c.devicePlugin.strip().toLowerCase(java.util.Locale.ROOT)) {
            case "on", "true" -> true;
            case "off", "false" -> false;
            default -> throw new IllegalArgumentException("--device-plugin: " + c.devicePlugin
                    + " (expected: on or off)");
        };
        if (!on) {
            return Optional.empty();
        }
        if (devices.isEmpty()) {
            throw new IllegalArgumentException("--device-plugin: on with --device-source=none (expected:"
                    + " --device-source=nvidia-smi or mock: the plugin lists the GPUs the agent discovers)");
        }
        String node = nodeName.orElseThrow();
        DeviceConfig deviceConfig = c.deviceConfig == null ? DeviceConfig.defaults()
                : DeviceConfig.load(requireFile("--device-config", c.deviceConfig));
        DevicePluginConfig plugin;
        try {
            plugin = DevicePluginConfig.of(c.devicePluginDir.toAbsolutePath().normalize(),
                    deviceConfig.nvidia().resourceCountName()).withNumaTopology(c.devicePluginNumaTopology);
        } catch (IllegalArgumentException e) {
            throw e.getMessage().startsWith("--") ? e : new IllegalArgumentException("--device-config: nvidia."
                    + e.getMessage(), e);
        }
        AllocatorConfig allocator = AllocatorConfig.defaults(node)
                .withHamiCore(HamiCoreSettings.DEFAULTS.withDeviceMemoryScaling(
                        deviceConfig.nvidia().deviceMemoryScaling()))
                .withHostRoot(c.devicePluginHostRoot.toAbsolutePath().normalize())
                .withPodFieldSelector(c.podFieldSelector);
        return Optional.of(new DevicePluginSettings(plugin, allocator));
    }

    private static MockInventory mockInventory(AgentCommand c) {
        if (c.mockInventory != null && c.mockGpus != null) {
            throw new IllegalArgumentException("--mock-inventory and --mock-gpus: both given (expected: one of them)");
        }
        if (c.mockGpus != null) {
            return MockInventory.parseShorthand(c.mockGpus);
        }
        if (c.mockInventory == null) {
            throw new IllegalArgumentException("--device-source: mock without an inventory (expected: --mock-gpus such"
                    + " as A100-80GB or L4-24GB:2, or --mock-inventory FILE)");
        }
        try {
            return MockInventory.load(requireFile("--mock-inventory", c.mockInventory));
        } catch (IOException e) {
            throw new IllegalArgumentException("--mock-inventory: " + c.mockInventory + ": " + e.getMessage(), e);
        }
    }

    /** {@code HOST:PORT}, {@code [v6]:PORT} or {@code PORT} (all interfaces). */
    static String[] hostPort(String flag, String value) {
        String text = value.strip();
        String host = "0.0.0.0";
        String port = text;
        int colon = text.lastIndexOf(':');
        if (colon >= 0) {
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
        }
        try {
            int number = Integer.parseInt(port);
            if (number < 0 || number > 65535 || host.isEmpty()) {
                throw new NumberFormatException();
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": " + value + " (expected: HOST:PORT or PORT, e.g. 0.0.0.0:9443)");
        }
        return new String[] {host, port};
    }

    private static Path optionalFile(String flag, Path file) {
        return file == null ? null : requireFile(flag, file);
    }

    private static Path requireFile(String flag, Path file) {
        if (!Files.exists(file)) {
            throw new IllegalArgumentException(flag + ": " + file + ": file not found");
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(flag + ": " + file + ": not a regular file");
        }
        return file;
    }
}
