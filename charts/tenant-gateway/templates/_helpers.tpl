{{/*
Labels of every object: the kustomize base's two, then Helm's standard ones (HelmChartTest's normalization list
drops exactly these four when it compares the chart with kustomize).
*/}}
{{- define "tenant-gateway.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{- define "tenant-gateway.labels" -}}
app.kubernetes.io/name: tenant-gateway
app.kubernetes.io/part-of: tenant-gateway
{{ include "tenant-gateway.helmLabels" . }}
{{- end }}

{{/* The image reference: repository@digest, else repository:tag (tag defaults to the appVersion). */}}
{{- define "tenant-gateway.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* Kamaji's image/version split of the same reference (version carries the digest when one is set). */}}
{{- define "tenant-gateway.kamajiVersion" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}{{ $tag }}@{{ .Values.image.digest }}{{- else -}}{{ $tag }}{{- end -}}
{{- end }}

{{/* The service account the agent runs as: ours, or Kamaji's konnectivity-agent. */}}
{{- define "tenant-gateway.serviceAccountName" -}}
{{- if eq .Values.mode "kamaji" -}}{{ .Values.kamaji.serviceAccountName }}{{- else -}}tenant-gateway{{- end -}}
{{- end }}

{{/*
Whether the node role runs: under Kamaji with devices on, our DaemonSet tenant-gateway-node (run --tunnel=false)
registers the devices, serves kubelet's device plugin API and runs the lock controller, beside Kamaji's agent, which
keeps the tunnel and the webhook (manifests/overlays/kamaji-node). "true" or "false".
*/}}
{{- define "tenant-gateway.nodeRole" -}}
{{- and (eq .Values.mode "kamaji") (ne .Values.devices.source "none") -}}
{{- end }}

{{/* The node role's service account (its DaemonSet's, its ClusterRole's subject). */}}
{{- define "tenant-gateway.nodeServiceAccountName" -}}tenant-gateway-node{{- end }}

{{/* Who writes Nodes (the own-node policy's subject): the node role where it runs, else the agent. */}}
{{- define "tenant-gateway.nodeWriterServiceAccountName" -}}
{{- if eq (include "tenant-gateway.nodeRole" .) "true" -}}
{{ include "tenant-gateway.nodeServiceAccountName" . }}
{{- else -}}
{{ include "tenant-gateway.serviceAccountName" . }}
{{- end -}}
{{- end }}

{{/*
What one agent does with the API under these values, as JSON (fromJson): the uses of
io.tenantgateway.agent.k8s.KubernetesPermissions (AgentConfig.apiUses) that its rendered flags switch on. Called with
(dict "Values" .Values "role" ROLE): "agent", the agent with the tunnel (ours standalone, Kamaji's under Kamaji;
with the node role beside it the tunnel and the webhook only), or "node", the node role (no tunnel, no webhook).
Each role's ClusterRoles (and the Role) grant exactly what these need; HelmChartTest checks that against the Java
declaration per mode and role. tenant-gateway.agentUses and tenant-gateway.nodeUses call it with the root context.
*/}}
{{- define "tenant-gateway.uses" -}}
{{- $v := .Values -}}
{{- $node := eq .role "node" -}}
{{- $kamaji := eq $v.mode "kamaji" -}}
{{- $nodeRole := and $kamaji (ne $v.devices.source "none") -}}
{{- /* The node role's parts run in the node role only; without it, in the agent. */}}
{{- $nodeParts := or $node (not $nodeRole) -}}
{{- $webhook := and $v.webhook.enabled (not $node) -}}
{{- $certs := $v.webhook.certificates.mode -}}
{{- $devices := and $nodeParts (ne $v.devices.source "none") -}}
{{- $lock := and $nodeParts $v.hami.lockController.enabled -}}
{{- $plugin := and $nodeParts $v.devicePlugin.enabled -}}
{{- $tlsSecret := and $webhook (or $kamaji (eq $certs "self-managed")) -}}
{{- $selfManaged := and $webhook (eq $certs "self-managed") -}}
{{- $manage := and $webhook (ne $certs "cert-manager") -}}
{{- $deviceConfigMap := and $webhook (ne $v.hami.deviceConfigMap "") -}}
{{- /* AgentConfig.needsKubernetes: the webhook checks quotas and looks for HAMi's webhook whenever there is a client */}}
{{- $api := or $devices $lock $plugin $manage $tlsSecret $deviceConfigMap -}}
{{- $hamiCheck := and $webhook $api -}}
{{- /* Kamaji's DaemonSet has no NODE_NAME; ours (standalone, the node role) have */}}
{{- $nodeName := and $kamaji (not $node) (or $devices $lock) -}}
{{- dict
    "devices" $devices
    "capacity" (and $devices (eq $v.devices.source "mock"))
    "nodeCapacity" (and $devices $v.devices.reportNodeCapacity)
    "monitor" $devices
    "lock" $lock
    "devicePlugin" $plugin
    "nodeNameDiscovery" $nodeName
    "quota" $hamiCheck
    "hamiWebhookCheck" $hamiCheck
    "clusterDeviceState" $hamiCheck
    "deviceConfigMap" $deviceConfigMap
    "events" (or $lock $plugin $selfManaged $deviceConfigMap $hamiCheck)
    "tlsSecret" $tlsSecret
    "selfManaged" $selfManaged
    "manageConfig" $manage
    "doctor" (or $api $nodeName)
  | toJson -}}
{{- end }}
{{- define "tenant-gateway.agentUses" -}}
{{ include "tenant-gateway.uses" (dict "Values" .Values "role" "agent") }}
{{- end }}
{{- define "tenant-gateway.nodeUses" -}}
{{ include "tenant-gateway.uses" (dict "Values" .Values "role" "node") }}
{{- end }}

{{/*
The API rules for one role's uses (a tenant-gateway.uses dict as "uses"): nodes, pods, events, the webhook's reads
and writes, selfsubjectaccessreviews, as manifests/base/clusterrole.yaml lists them. With "whole" true (the node
role's one ClusterRole, manifests/overlays/kamaji-node/rbac.yaml) also nodes/status patch (mock or node capacity)
and pods patch (the device plugin), which the agent's roles keep in ClusterRoles of their own (the components').
*/}}
{{- define "tenant-gateway.rules" -}}
{{- $uses := .uses -}}
{{- $whole := .whole -}}
{{- $nodes := list }}
{{- if or $uses.lock $uses.devices $uses.devicePlugin }}{{ $nodes = append $nodes "get" }}{{ end }}
{{- if or $uses.lock $uses.clusterDeviceState }}{{ $nodes = concat $nodes (list "list" "watch") }}{{ end }}
{{- if or $uses.lock $uses.devices $uses.devicePlugin }}{{ $nodes = append $nodes "patch" }}{{ end }}
{{- $pods := list }}
{{- if or $uses.lock $uses.nodeNameDiscovery $uses.devicePlugin }}{{ $pods = append $pods "get" }}{{ end }}
{{- if or $uses.lock $uses.quota $uses.devicePlugin $uses.monitor }}{{ $pods = append $pods "list" }}{{ end }}
{{- if or $uses.lock $uses.quota }}{{ $pods = append $pods "watch" }}{{ end }}
{{- if and $whole $uses.devicePlugin }}{{ $pods = append $pods "patch" }}{{ end }}
{{- with $nodes }}
- apiGroups: [""]
  resources: ["nodes"]
  verbs: {{ toJson . }}
{{- end }}
{{- if and $whole (or $uses.capacity $uses.nodeCapacity) }}
# --device-source=mock advertises nvidia.com/* capacity; --report-node-capacity=true the gpumem and gpucores totals.
- apiGroups: [""]
  resources: ["nodes/status"]
  verbs: ["patch"]
{{- end }}
{{- with $pods }}
- apiGroups: [""]
  resources: ["pods"]
  verbs: {{ toJson . }}
{{- end }}
{{- if $uses.events }}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}
{{- if $uses.quota }}
- apiGroups: [""]
  resources: ["resourcequotas"]
  verbs: ["list", "watch"]
{{- end }}
{{- if $uses.deviceConfigMap }}
# HAMi's device config (--device-config-map), applied live; a ClusterRole names the ConfigMap in any namespace.
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: [{{ .Values.hami.deviceConfigMap | splitList "/" | last | quote }}]
  verbs: ["get", "list", "watch"]
{{- end }}
{{- if $uses.manageConfig }}
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["mutatingwebhookconfigurations"]
  resourceNames: ["tenant-gateway-hami-webhook"]
  verbs: ["get", "patch"]
{{- end }}
{{- if $uses.hamiWebhookCheck }}
# Find HAMi's own webhook (vgpu.hami.io) installed next to ours (Warning Event HamiWebhookConflict).
- apiGroups: ["admissionregistration.k8s.io"]
  resources: ["mutatingwebhookconfigurations"]
  verbs: ["list", "watch"]
{{- end }}
{{- if $uses.doctor }}
- apiGroups: ["authorization.k8s.io"]
  resources: ["selfsubjectaccessreviews"]
  verbs: ["create"]
{{- end }}
{{- end }}

{{/* NAMESPACE/NAME of the webhook's TLS Secret. */}}
{{- define "tenant-gateway.tlsSecretRef" -}}
{{ .Release.Namespace }}/{{ .Values.webhook.certificates.secretName }}
{{- end }}

{{/* The agent's default --webhook-service and --device-config-map (AgentCommand). */}}
{{- define "tenant-gateway.defaultWebhookService" -}}kube-system/tenant-gateway-webhook{{- end }}
{{- define "tenant-gateway.defaultDeviceConfigMap" -}}kube-system/hami-scheduler-device{{- end }}

{{/*
The self-managed certificate's flags after --webhook-tls-secret (components/webhook-tls-self-managed): the Service
only outside kube-system (the agent's default names kube-system/tenant-gateway-webhook), each duration only when set.
*/}}
{{- define "tenant-gateway.selfManagedArgs" -}}
{{- $sm := .Values.webhook.certificates.selfManaged }}
- --webhook-tls-self-managed=true
{{- $service := printf "%s/tenant-gateway-webhook" .Release.Namespace }}
{{- if and .Release.Namespace (ne $service (include "tenant-gateway.defaultWebhookService" .)) }}
- --webhook-service={{ $service }}
{{- end }}
{{- with $sm.validity }}
- --webhook-tls-validity={{ . }}
{{- end }}
{{- with $sm.renewBefore }}
- --webhook-tls-renew-before={{ . }}
{{- end }}
{{- with $sm.caValidity }}
- --webhook-ca-validity={{ . }}
{{- end }}
{{- end }}

{{/*
The webhook's flags in Kamaji's extraArgs (overlays/kamaji/tenantcontrolplane-patch.yaml): the Secret is read
through the API, as Kamaji's DaemonSet mounts nothing of ours. With the node role (overlays/kamaji-node) the lock
controller and the devices are the node role's: Kamaji's agent keeps the tunnel and the webhook.
*/}}
{{- define "tenant-gateway.kamajiArgs" -}}
{{- $v := .Values -}}
{{- $certs := $v.webhook.certificates.mode -}}
{{- $lock := and $v.hami.lockController.enabled (ne (include "tenant-gateway.nodeRole" .) "true") -}}
{{- if $v.webhook.enabled }}
- --webhook-listen=0.0.0.0:{{ $v.webhook.port }}
- --webhook-tls-secret={{ include "tenant-gateway.tlsSecretRef" . }}
{{- if eq $certs "self-managed" }}
{{- include "tenant-gateway.selfManagedArgs" . }}
{{- end }}
{{- if ne $certs "cert-manager" }}
- --manage-webhook-config=true
{{- end }}
{{- end }}
- --enable-lock-controller={{ $lock }}
{{- if $lock }}
- --allocation-mode={{ include "tenant-gateway.allocationMode" . }}
{{- end }}
{{- include "tenant-gateway.extraArgs" . }}
{{- end }}

{{/*
The node role's arguments (overlays/kamaji-node/daemonset.yaml, in its order): no tunnel, so none of its flags; the
lock controller, then the devices' flags; nodeRole.extraArgs last.
*/}}
{{- define "tenant-gateway.nodeArgs" -}}
{{- $v := .Values -}}
- run
- -v={{ $v.logging.verbosity }}
- --logtostderr=true
- --tunnel=false
- --admin-server-port={{ $v.ports.admin }}
- --health-server-port={{ $v.ports.health }}
- --enable-lock-controller={{ $v.hami.lockController.enabled }}
{{- if $v.hami.lockController.enabled }}
- --allocation-mode={{ include "tenant-gateway.allocationMode" . }}
- --node-lock-timeout={{ $v.hami.lockController.nodeLockTimeout }}
{{- end }}
- --shutdown-grace=25s
{{- include "tenant-gateway.deviceArgs" . }}
{{- with $v.logging.format }}
- --log-format={{ . }}
{{- end }}
{{- range $v.nodeRole.extraArgs }}
- {{ . | toJson }}
{{- end }}
{{- end }}

{{/* The standalone DaemonSet's arguments (manifests/base/daemonset.yaml, in its order). */}}
{{- define "tenant-gateway.standaloneArgs" -}}
{{- $v := .Values -}}
{{- $certs := $v.webhook.certificates.mode -}}
- run
- -v={{ $v.logging.verbosity }}
- --logtostderr=true
- --ca-cert=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt
- --proxy-server-host=$(PROXY_SERVER_HOST)
- --proxy-server-port=$(PROXY_SERVER_PORT)
- --admin-server-port={{ $v.ports.admin }}
- --health-server-port={{ $v.ports.health }}
- --service-account-token-path=/var/run/secrets/tokens/konnectivity-agent-token
{{- if $v.webhook.enabled }}
- --webhook-listen=0.0.0.0:{{ $v.webhook.port }}
{{- if eq $certs "self-managed" }}
- --webhook-tls-secret={{ include "tenant-gateway.tlsSecretRef" . }}
{{- include "tenant-gateway.selfManagedArgs" . }}
{{- else }}
- --webhook-tls-cert=/etc/tenant-gateway/webhook/tls.crt
- --webhook-tls-key=/etc/tenant-gateway/webhook/tls.key
{{- end }}
{{- if ne $certs "cert-manager" }}
- --manage-webhook-config=true
{{- end }}
{{- if eq $certs "secret" }}
- --webhook-ca-bundle=/etc/tenant-gateway/webhook/ca.crt
{{- end }}
{{- end }}
- --enable-lock-controller={{ $v.hami.lockController.enabled }}
{{- if $v.hami.lockController.enabled }}
- --allocation-mode={{ include "tenant-gateway.allocationMode" . }}
- --node-lock-timeout={{ $v.hami.lockController.nodeLockTimeout }}
{{- end }}
- --shutdown-grace=25s
{{- include "tenant-gateway.extraArgs" . }}
{{- end }}

{{/* --allocation-mode: the value, else the agent's default (device-plugin with the device plugin, else observe). */}}
{{- define "tenant-gateway.allocationMode" -}}
{{- .Values.hami.allocationMode | default (ternary "device-plugin" "observe" .Values.devicePlugin.enabled) -}}
{{- end }}

{{/*
Flags both modes append after their own, each only when its value is set: the devices' (tenant-gateway.deviceArgs,
the node role's where it runs), the webhook's, the tunnel's, logging, extraArgs.
*/}}
{{- define "tenant-gateway.extraArgs" -}}
{{- $v := .Values -}}
{{- if ne (include "tenant-gateway.nodeRole" .) "true" }}
{{- include "tenant-gateway.deviceArgs" . }}
{{- end }}
{{- if $v.webhook.enabled }}
{{- /* "" turns the watch off (HAMi's defaults); the agent's default is not repeated */}}
{{- if ne $v.hami.deviceConfigMap (include "tenant-gateway.defaultDeviceConfigMap" .) }}
- --device-config-map={{ $v.hami.deviceConfigMap }}
{{- end }}
{{- with $v.hami.schedulerName }}
- --scheduler-name={{ . }}
{{- end }}
{{- with $v.hami.compat }}
- --hami-compat={{ . }}
{{- end }}
{{- if $v.devices.ascend.enabled }}
- --enable-ascend
{{- end }}
{{- if $v.devices.iluvatar.enabled }}
- --enable-iluvatar
{{- end }}
{{- end }}
{{- with $v.dial.allow }}
- --dial-allow={{ join "," . }}
{{- end }}
{{- with $v.dial.deny }}
- --dial-deny={{ join "," . }}
{{- end }}
{{- with $v.dial.timeout }}
- --dial-timeout={{ . }}
{{- end }}
{{- with $v.logging.format }}
- --log-format={{ . }}
{{- end }}
{{- range $v.extraArgs }}
- {{ . | toJson }}
{{- end }}
{{- end }}

{{/* Values that cannot work together: fail the render with what to change. */}}
{{- define "tenant-gateway.validate" -}}
{{- $v := .Values -}}
{{- if eq $v.mode "kamaji" }}
{{- /* helm lint renders without a namespace */}}
{{- if and .Release.Namespace (ne .Release.Namespace "kube-system") }}
{{- fail (printf "mode=kamaji: namespace %s (expected: kube-system, where Kamaji runs konnectivity-agent; helm install -n kube-system)" .Release.Namespace) }}
{{- end }}
{{- /* The device plugin and a mock inventory file run in the node role's DaemonSet, which mounts them. */}}
{{- end }}
{{- if and $v.devicePlugin.enabled (eq $v.devices.source "none") }}
{{- fail "devicePlugin.enabled: true with devices.source=none (expected: devices.source=nvidia-smi or mock; the plugin lists the GPUs the agent discovers)" }}
{{- end }}
{{- if and $v.devices.reportNodeCapacity (eq $v.devices.source "none") }}
{{- fail "devices.reportNodeCapacity: true with devices.source=none (expected: devices.source=nvidia-smi or mock; the totals are those of the GPUs the agent registers)" }}
{{- end }}
{{- if and (eq $v.hami.allocationMode "device-plugin") (not $v.devicePlugin.enabled) }}
{{- fail "hami.allocationMode=device-plugin without devicePlugin.enabled (expected: observe, empty, or devicePlugin.enabled: true)" }}
{{- end }}
{{- if and (eq $v.devices.source "mock") (not $v.devices.mock.gpus) (not $v.devices.mock.devices) (not $v.devices.mock.inventory) }}
{{- fail "devices.source=mock: no GPUs (expected: devices.mock.gpus, e.g. A100-80GB, devices.mock.devices, e.g. Ascend910B4:2,DCU-K100:1, or devices.mock.inventory)" }}
{{- end }}
{{- end }}

{{/*
The devices' flags, each only when its value is set; the device plugin's first, where components/device-plugin
appends them (before the overlays' --device-source).
*/}}
{{- define "tenant-gateway.deviceArgs" -}}
{{- $v := .Values -}}
{{- if $v.devicePlugin.enabled }}
- --device-plugin=true
- --device-plugin-dir={{ $v.devicePlugin.dir }}
{{- if $v.devicePlugin.numaTopology }}
- --device-plugin-numa-topology=true
{{- end }}
{{- end }}
{{- if ne $v.devices.source "none" }}
- --device-source={{ $v.devices.source }}
{{- end }}
{{- if eq $v.devices.source "mock" }}
{{- with $v.devices.mock.gpus }}
- --mock-gpus={{ . }}
{{- end }}
{{- with $v.devices.mock.devices }}
- --mock-devices={{ . }}
{{- end }}
{{- if $v.devices.mock.inventory }}
- --mock-inventory=/etc/tenant-gateway/mock/inventory.yaml
{{- end }}
{{- end }}
{{- if eq $v.devices.source "nvidia-smi" }}
{{- with $v.devices.nvidiaSmi.path }}
- --nvidia-smi-path={{ . }}
{{- end }}
{{- end }}
{{- if and (ne $v.devices.source "none") (not (kindIs "invalid" $v.devices.splitCount)) }}
- --device-split-count={{ $v.devices.splitCount }}
{{- end }}
{{- if and (ne $v.devices.source "none") $v.devices.reportNodeCapacity }}
- --report-node-capacity=true
{{- end }}
{{- end }}
