{{/*
What the agent's pod templates share: ours standalone (daemonset.yaml) and the node role's (node-daemonset.yaml).
Each renders YAML for the indentation its caller gives (nindent), or nothing.
*/}}

{{/* Where the pods run: priority, runtime class, pull secrets, node selection, tolerations. */}}
{{- define "tenant-gateway.podScheduling" -}}
{{- $v := .Values -}}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.runtimeClassName }}
runtimeClassName: {{ . }}
{{- end }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The pod's securityContext: podSecurityContext, and with the device plugin uid/gid 0 over it (kubelet's device plugin
directory is root's, 0750), as components/device-plugin patches.
*/}}
{{- define "tenant-gateway.podSecurity" -}}
{{- $podSecurity := deepCopy (default (dict) .Values.podSecurityContext) }}
{{- if .Values.devicePlugin.enabled }}
{{- $_ := set $podSecurity "runAsNonRoot" false }}
{{- $_ = set $podSecurity "runAsUser" 0 }}
{{- $_ = set $podSecurity "runAsGroup" 0 }}
{{- end }}
{{- with $podSecurity }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* With the device plugin: the init container that puts HAMi-core on the host. */}}
{{- define "tenant-gateway.hamiCoreInit" -}}
{{- if .Values.devicePlugin.enabled }}
{{- $hamiImage := .Values.devicePlugin.hamiCore.image }}
initContainers:
  # HAMi-core on the host: HAMi's own vgpu-init.sh copies libvgpu.so and ld.so.preload into /usr/local/vgpu,
  # as HAMi's device plugin does in its postStart hook (the agent ships no libvgpu.so).
  - name: hami-core
    image: {{ $hamiImage.registry }}/{{ $hamiImage.repository }}:{{ $hamiImage.tag }}
    {{- with $hamiImage.pullPolicy }}
    imagePullPolicy: {{ . }}
    {{- end }}
    command: ["/bin/sh", "-c", "/k8s-vgpu/bin/vgpu-init.sh /usr/local/vgpu/"]
    securityContext:
      runAsUser: 0
      allowPrivilegeEscalation: false
      capabilities:
        drop: ["ALL"]
    resources:
      requests:
        cpu: 10m
        memory: 32Mi
      limits:
        memory: 64Mi
    volumeMounts:
      - name: vgpu
        mountPath: /usr/local/vgpu
{{- end }}
{{- end }}

{{/* The agent container's probes (the health port), resources and securityContext. */}}
{{- define "tenant-gateway.containerHealth" -}}
{{- $v := .Values -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: {{ $v.ports.health }}
  initialDelaySeconds: 10
  periodSeconds: 10
  timeoutSeconds: 5
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: {{ $v.ports.health }}
  periodSeconds: 5
  timeoutSeconds: 3
{{- with $v.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.securityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* With the device plugin: kubelet's directory and HAMi-core's, mounted (volumeMounts entries). */}}
{{- define "tenant-gateway.devicePluginMounts" -}}
{{- if .Values.devicePlugin.enabled }}
- name: device-plugins
  mountPath: {{ .Values.devicePlugin.dir }}
# HAMi-core's library and the per-container caches Allocate creates, and its lock, at their host paths.
- name: vgpu
  mountPath: /usr/local/vgpu
- name: vgpulock
  mountPath: /tmp/vgpulock
{{- end }}
{{- end }}

{{/* With the device plugin: the host paths behind those mounts (volumes entries). */}}
{{- define "tenant-gateway.devicePluginVolumes" -}}
{{- if .Values.devicePlugin.enabled }}
- name: device-plugins
  hostPath:
    path: {{ .Values.devicePlugin.dir }}
    type: Directory
- name: vgpu
  hostPath:
    path: /usr/local/vgpu
    type: DirectoryOrCreate
- name: vgpulock
  hostPath:
    path: /tmp/vgpulock
    type: DirectoryOrCreate
{{- end }}
{{- end }}
