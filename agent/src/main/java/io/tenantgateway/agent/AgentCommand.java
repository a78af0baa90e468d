package io.tenantgateway.agent;

import io.tenantgateway.agent.deviceplugin.DevicePluginSettings;
import io.tenantgateway.agent.webhook.ManagedWebhookConfiguration;
import io.tenantgateway.agent.webhook.WebhookSettings;
import io.tenantgateway.agent.cli.ConfigFileDefaults;
import io.tenantgateway.agent.cli.ExitCodes;
import io.tenantgateway.agent.cli.GoFlags;
import io.tenantgateway.agent.cli.TunnelFlags;
import io.tenantgateway.agent.cli.UsageHelp;
import io.tenantgateway.agent.deviceplugin.DevicePluginFlags;
import io.tenantgateway.agent.devices.DeviceFlags;
import io.tenantgateway.agent.hami.DeviceConfigFile;
import io.tenantgateway.agent.devices.DeviceRegistrationConfig;
import io.tenantgateway.agent.locks.AllocationConfig;
import io.tenantgateway.agent.locks.AllocationMode;
import io.tenantgateway.agent.locks.LockControllerFlags;
import io.tenantgateway.agent.logging.LogSetup;
import io.tenantgateway.agent.logging.LoggingFlags;
import io.tenantgateway.agent.part.PartFlags;
import io.tenantgateway.agent.part.PartKind;
import io.tenantgateway.agent.part.SharedSettings;
import io.tenantgateway.agent.webhook.WebhookFlags;
import io.tenantgateway.common.config.ConfigException;
import io.tenantgateway.common.time.GoDuration;
import io.tenantgateway.tunnel.TunnelConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tenant-gateway run}: the agent. Accepts every {@code konnectivity-agent} flag with the upstream default
 * (so Kamaji's fixed argument list works unchanged) plus tenant-gateway's own flags. Each part's flags are a mixin
 * that maps them onto its part of {@link AgentConfig} and checks them ({@link TunnelFlags}, {@link LoggingFlags},
 * {@link WebhookFlags}, {@link DeviceFlags}, {@link DevicePluginFlags}, {@link LockControllerFlags}, and the flags each
 * part of {@link Parts#FLAGS} brings, added by {@link PartFlagsMixins}); {@link #toConfig()} composes the parts and
 * checks the rules between them, once; nothing else reads the flags.
 *
 * <p>Every flag can also come from {@code --config FILE} (YAML, keys are the flag names without dashes); a flag on
 * the command line wins over the file.
 */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = Version.class,
        sortOptions = false, abbreviateSynopsis = true, modelTransformer = AgentCommand.PartFlagsMixins.class,
        description = {"Run the agent: a drop-in konnectivity-agent, plus the HAMi parts that are turned on.",
            "With only konnectivity-agent flags it is a pure konnectivity-agent; the HAMi webhook, GPU device"
                + " registration, the device plugin and the node-lock controller each turn on with their own flags."
                + " --tunnel=false runs those parts without the tunnel (the node role)."
                + " Booleans: --flag, --flag=true or --flag=false. Every flag can also come from --config FILE."})
public final class AgentCommand implements Callable<Integer>, UsageHelp.Sectioned {
    private static final Logger log = LoggerFactory.getLogger(AgentCommand.class);
    /** Name of the MutatingWebhookConfiguration in manifests/base. */
    public static final String DEFAULT_WEBHOOK_CONFIG_NAME = WebhookFlags.DEFAULT_WEBHOOK_CONFIG_NAME;
    /** Node name the flags are validated with while the real one is read from the API (a valid DNS label). */
    static final String PENDING_NODE_NAME = "node-name-pending";

    @Spec
    CommandSpec spec;

    /**
     * {@code --help}'s sections, as agent/REFERENCE.md groups the flags: each option's picocli {@code order} names its
     * section (1 konnectivity-agent, 6 upstream flags accepted but not implemented, 2 tenant-gateway, 3 webhook,
     * 4 device registration, 7 device plugin, 5 lock controller), listed in this order, then the sections of the parts
     * that bring their own flags ({@link PartFlags#helpOrder()}).
     */
    static final List<UsageHelp.Section> SECTIONS = List.of(
            new UsageHelp.Section(1, "konnectivity-agent flags (upstream names and defaults)"),
            new UsageHelp.Section(6, "Upstream flags accepted but not implemented yet (a value other than the"
                    + " default warns at start)"),
            new UsageHelp.Section(2, "tenant-gateway flags (the agent and its tunnels)"),
            new UsageHelp.Section(3, "HAMi webhook (on with --webhook-tls-cert or --webhook-tls-secret)"),
            new UsageHelp.Section(4, "Device registration (on with --device-source=mock or"
                    + " --device-source=nvidia-smi)"),
            new UsageHelp.Section(7, "Device plugin (on with --device-plugin=true; needs device registration)"),
            new UsageHelp.Section(5, "Node lock and allocation completion (on when devices are registered)"));

    // --- tenant-gateway's own flags; each part's flags are in its mixin, next to their mapping and checks. Their
    // order attribute is their section of --help (SECTIONS). ------------------------------------------------------

    @Option(names = "--config", order = 2, paramLabel = "FILE",
            description = "YAML file with any of these flags as keys (without dashes); command-line flags win."
                    + " Default: none.")
    Path configFile;

    @Option(names = "--node-name", defaultValue = "${env:NODE_NAME}", order = 2, paramLabel = "NAME",
            description = "This node, for device registration, the device plugin and the lock controller. Default: env"
                    + " NODE_NAME, else this pod's spec.nodeName, read through the API.")
    String nodeName;

    @Option(names = "--shutdown-grace", defaultValue = "25s", order = 2, paramLabel = "DURATION",
            description = "After the first SIGTERM: drain, then exit within this (a second SIGTERM exits at once)."
                    + " Default: ${DEFAULT-VALUE}.")
    String shutdownGrace;

    @Mixin
    TunnelFlags tunnel;

    @Mixin
    LoggingFlags logging;

    @Mixin
    WebhookFlags webhook;

    @Mixin
    DeviceFlags devices;

    @Mixin
    DevicePluginFlags devicePlugin;

    @Mixin
    LockControllerFlags locks;

    /** The flags of the parts that bring their own ({@link Parts#FLAGS}), as {@link PartFlagsMixins} added them. */
    private List<PartFlags> partFlags = List.of();

    /**
     * Adds the flags of each part in {@link Parts#FLAGS} to {@code run}'s command line, as picocli mixins, when the
     * command line is built, and hands them to the command for {@link #toConfig()}: a new part's flags need no field
     * here.
     */
    public static final class PartFlagsMixins implements CommandLine.IModelTransformer {
        @Override
        public CommandSpec transform(CommandSpec spec) {
            if (spec.userObject() instanceof AgentCommand command) {
                List<PartFlags> flags = new ArrayList<>();
                for (Supplier<PartFlags> part : Parts.FLAGS) {
                    PartFlags mixin = part.get();
                    spec.addMixin("part-" + flags.size(), CommandSpec.forAnnotatedObject(mixin));
                    flags.add(mixin);
                }
                command.partFlags = List.copyOf(flags);
            }
            return spec;
        }
    }

    @Override
    public List<UsageHelp.Section> optionSections() {
        List<UsageHelp.Section> sections = new ArrayList<>(SECTIONS);
        for (PartFlags flags : partFlags) {
            sections.add(new UsageHelp.Section(flags.helpOrder(), flags.helpTitle()));
        }
        return sections;
    }

    private boolean needsNodeName() {
        return devices.enabled() || locks.enabled(false);
    }

    /**
     * The validated configuration these flags describe (also how {@code lab} builds its agents' real wiring): each
     * part from its mixin, and here the rules between parts, with plain values passed from one to the next (the
     * mixins do not know each other).
     */
    public AgentConfig toConfig() {
        LogSetup.Options logOptions = logging.options();
        String agentId = tunnel.agentId();
        Optional<TunnelConfig> tunnelConfig = tunnel.tunnel(agentId);
        Optional<String> node = Optional.ofNullable(nodeName).map(String::strip).filter(s -> !s.isEmpty());
        node.ifPresent(name -> io.tenantgateway.agent.node.NodeNames.requireValid("--node-name", name));
        Optional<WebhookSettings> webhookPart = webhook.settings();

        // HAMi's device config, parsed once, for the parts that read it (the webhook reads it itself, and again on
        // change).
        DeviceConfigFile deviceConfig = DeviceConfigFile.of(webhook.deviceConfigFile());
        Optional<DeviceRegistrationConfig> registration = devices.config(node, deviceConfig);
        Optional<DevicePluginSettings> plugin = Optional.empty();
        if (devicePlugin.enabled()) {
            if (registration.isEmpty()) {
                throw new ConfigException("--device-plugin", "true with --device-source=none", "--device-source="
                        + "nvidia-smi or mock: the plugin lists the GPUs the agent discovers");
            }
            plugin = Optional.of(devicePlugin.settings(node.orElseThrow(), deviceConfig, locks.podFieldSelector()));
        }
        Optional<AllocationConfig> allocation = Optional.empty();
        if (locks.enabled(registration.isPresent())) {
            AllocationMode mode = locks.mode()
                    .orElse(plugin.isPresent() ? AllocationMode.DEVICE_PLUGIN : AllocationMode.OBSERVE);
            if (mode == AllocationMode.DEVICE_PLUGIN && plugin.isEmpty()) {
                throw new ConfigException("--allocation-mode", "device-plugin without --device-plugin=true",
                        "observe, or --device-plugin=true");
            }
            allocation = Optional.of(locks.config(node, mode));
        }
        SharedSettings shared = new SharedSettings(node, registration.isPresent(), devicePlugin.hostRoot(),
                locks.podFieldSelector());
        List<PartKind> flaggedParts = new ArrayList<>();
        for (PartFlags flags : partFlags) {
            flaggedParts.add(flags.kind(shared));
        }
        Optional<ManagedWebhookConfiguration> managed = webhook.managedConfiguration();
        AgentConfig.Servers servers = tunnel.servers(AgentConfig.Servers::new);
        // The placeholder checks the parts' flags before the name is discovered; the agent itself has none yet.
        Optional<String> agentNode = node.filter(name -> !name.equals(PENDING_NODE_NAME));
        AgentConfig config = new AgentConfig(tunnelConfig, agentId, servers, logOptions.format(),
                logOptions.verbosity(), agentNode, webhookPart, registration, allocation, managed,
                GoDuration.parse("--shutdown-grace", shutdownGrace), tunnel.profiling(), tunnel.contentionProfiling(),
                plugin, flaggedParts, webhook.hamiRelease());
        // The node role: an agent without its tunnel is there for its parts.
        if (tunnelConfig.isEmpty() && Parts.enabled(config).isEmpty()) {
            throw new ConfigException("--tunnel", "false with no part on", "at least one part without the tunnel:"
                    + " --device-source=mock|nvidia-smi (device registration, with the lock controller, the monitor"
                    + " and --device-plugin=true), --enable-lock-controller=true, or the webhook");
        }
        return config;
    }

    /**
     * Parses {@code args} exactly as {@code run} does ({@code --config FILE} applied as defaults, Go's single-dash
     * long forms accepted, unknown flags rejected) without running anything: for commands that take the same flags
     * as {@code run} ({@code doctor}).
     *
     * @throws picocli.CommandLine.ParameterException when a flag is unknown or malformed ({@link GoFlags#message}
     *     gives the one-line text)
     * @throws IllegalArgumentException when the {@code --config} file is unreadable or has unknown keys
     */
    public static AgentCommand parse(String... args) {
        AgentCommand command = new AgentCommand();
        CommandLine commandLine = goParsing(new CommandLine(command));
        String[] normalized = GoFlags.normalize(commandLine.getCommandSpec(), args);
        ConfigFileDefaults.install(commandLine, normalized);
        commandLine.parseArgs(normalized);
        return command;
    }

    /**
     * pflag's rules on a {@code run} command line: a repeated flag overrides the earlier one (Kamaji appends the
     * agent's {@code extraArgs} after its fixed list, to override it); list flags collect every value.
     */
    public static CommandLine goParsing(CommandLine commandLine) {
        return commandLine.setOverwrittenOptionsAllowed(true);
    }

    /**
     * What {@code run} warns about at start, one line each: every upstream flag this version accepts but does not
     * implement yet, when it is set to something other than upstream's default (flag or {@code --config}), a
     * {@code --keepalive-time} below konnectivity-server's 30 s ping limit, and flags that have no effect as given.
     */
    public List<String> warnings() {
        List<String> out = new ArrayList<>(tunnel.warnings());
        out.addAll(logging.warnings());
        out.addAll(webhook.warnings());
        for (PartFlags flags : partFlags) {
            out.addAll(flags.warnings());
        }
        return out;
    }

    /** The logging flags, checked. */
    public LogSetup.Options logOptions() {
        return logging.options();
    }

    /**
     * {@link #toConfig()}, after finding the node name through the API when a part needs one and neither
     * {@code --node-name} nor {@code NODE_NAME} gave it (Kamaji's DaemonSet has no downward-API env).
     */
    public AgentConfig resolveConfig() {
        if ((nodeName == null || nodeName.isBlank()) && needsNodeName()) {
            nodeName = io.tenantgateway.agent.node.NodeNames.discover(tunnel.kubeconfig());
        }
        return toConfig();
    }

    @Override
    public Integer call() {
        LogSetup.configure(logOptions());
        for (String warning : warnings()) {
            log.warn(warning); // a loop, not forEach(log::warn): the caller in the log line is this file
        }
        if ((nodeName == null || nodeName.isBlank()) && needsNodeName()) {
            // Kamaji's DaemonSet sets no NODE_NAME: the agent reads it from its pod through the API, in the
            // background, so the tunnel does not wait for the API. The flags are checked now, once, with a
            // placeholder that only the parts' own configs carry until the name is known (the agent's config has no
            // node name: NodeIdentity tells it, and each part applies it when it starts: Plan.withNodeName).
            io.tenantgateway.agent.node.NodeNames.PodIdentity pod = io.tenantgateway.agent.node.NodeNames.podIdentity();
            nodeName = PENDING_NODE_NAME;
            AgentConfig provisional = toConfig();
            nodeName = null;
            Path api = tunnel.kubeconfig();
            io.tenantgateway.agent.node.NodeIdentity node = io.tenantgateway.agent.node.NodeIdentity.fromPod(pod,
                    () -> io.tenantgateway.agent.node.NodeNames.discover(api, pod));
            return AgentRunner.run(provisional, node, spec.commandLine().getErr()) ? ExitCodes.OK : ExitCodes.FAILED;
        }
        AgentConfig config = toConfig();
        return AgentRunner.run(config, spec.commandLine().getErr()) ? ExitCodes.OK : ExitCodes.FAILED;
    }
}
