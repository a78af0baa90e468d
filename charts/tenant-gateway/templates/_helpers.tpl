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
What the agent does with the API under these values, as JSON (fromJson): the uses of
io.tenantgateway.agent.k8s.KubernetesPermissions (AgentConfig.apiUses) that the rendered flags switch on. The
ClusterRoles and the Role grant exactly what these need; HelmChartTest checks that against the Java declaration per
mode.
*/}}
{{- define "tenant-gateway.uses" -}}
{{- $v := .Values -}}
{{- $kamaji := eq $v.mode "kamaji" -}}
{{- $webhook := $v.webhook.enabled -}}
{{- $certs := $v.webhook.certificates.mode -}}
{{- $devices := ne $v.devices.source "none" -}}
{{- $lock := $v.hami.lockController.enabled -}}
{{- $plugin := and $v.devicePlugin.enabled (not $kamaji) -}}
{{- $tlsSecret := and $webhook (or $kamaji (eq $certs "self-managed")) -}}
{{- $selfManaged := and $webhook (eq $certs "self-managed") -}}
{{- $manage := and $webhook (ne $certs "cert-manager") -}}
{{- $deviceConfigMap := and $webhook (ne $v.hami.deviceConfigMap "") -}}
{{- /* AgentConfig.needsKubernetes: the webhook checks quotas and looks for HAMi's webhook whenever there is a client */}}
{{- $api := or $devices $lock $plugin $manage $tlsSecret $deviceConfigMap -}}
{{- $hamiCheck := and $webhook $api -}}
{{- $nodeName := and $kamaji (or $devices $lock) -}}
{{- dict
    "devices" $devices
    "capacity" (eq $v.devices.source "mock")
    "nodeCapacity" (and $devices $v.devices.reportNodeCapacity)
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
through the API, as Kamaji's DaemonSet mounts nothing of ours.
*/}}
{{- define "tenant-gateway.kamajiArgs" -}}
{{- $v := .Values -}}
{{- $certs := $v.webhook.certificates.mode -}}
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
- --enable-lock-controller={{ $v.hami.lockController.enabled }}
{{- if $v.hami.lockController.enabled }}
- --allocation-mode={{ include "tenant-gateway.allocationMode" . }}
{{- end }}
{{- include "tenant-gateway.extraArgs" . }}
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
Flags both modes append after their own, each only when its value is set; the device plugin's first, where
components/device-plugin appends them (before the overlays' --device-source).
*/}}
{{- define "tenant-gateway.extraArgs" -}}
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
{{- if $v.devices.mock.inventory }}
{{- fail "devices.mock.inventory: set with mode=kamaji (expected: devices.mock.gpus; Kamaji's DaemonSet cannot mount the inventory file)" }}
{{- end }}
{{- if $v.devicePlugin.enabled }}
{{- fail "devicePlugin.enabled: true with mode=kamaji (expected: false; Kamaji's DaemonSet cannot mount the kubelet's device-plugins directory)" }}
{{- end }}
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
