{{/* Chart name, or nameOverride. */}}
{{- define "platformapi.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Resource name prefix: fullnameOverride, else release-name, else the release name alone when it holds the chart name. */}}
{{- define "platformapi.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels of every resource. */}}
{{- define "platformapi.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "platformapi.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of the server pods. */}}
{{- define "platformapi.selectorLabels" -}}
app.kubernetes.io/name: {{ include "platformapi.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{/* Selector labels of the node-agent pods. */}}
{{- define "platformapi.agentSelectorLabels" -}}
app.kubernetes.io/name: {{ include "platformapi.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node-agent
{{- end }}

{{/* The image reference: repository@digest, else repository:tag (tag defaults to appVersion). */}}
{{- define "platformapi.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Name of the Secret the pods read. */}}
{{- define "platformapi.secretName" -}}
{{- if .Values.secrets.create }}
{{- include "platformapi.fullname" . }}
{{- else }}
{{- default (include "platformapi.fullname" .) .Values.secrets.existingSecret }}
{{- end }}
{{- end }}

{{/* true when the pods must have REDIS_URL: several replicas and server.requireRedis. */}}
{{- define "platformapi.redisRequired" -}}
{{- and .Values.server.requireRedis (gt (int .Values.replicaCount) 1) }}
{{- end }}

{{/* Environment from the Secret: DATABASE_URL, PLATFORMAPI_TOKEN_PEPPER and (see platformapi.redisRequired) REDIS_URL. */}}
{{- define "platformapi.secretEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "platformapi.secretName" . }}
      key: DATABASE_URL
- name: PLATFORMAPI_TOKEN_PEPPER
  valueFrom:
    secretKeyRef:
      name: {{ include "platformapi.secretName" . }}
      key: PLATFORMAPI_TOKEN_PEPPER
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "platformapi.secretName" . }}
      key: REDIS_URL
      optional: {{ not (eq (include "platformapi.redisRequired" .) "true") }}
{{- end }}

{{/* Seconds (a number) of the Go duration (dict "name" <value's name> "value" <value>): 5s, 1m30s, 500ms; fails naming the value when it is none. */}}
{{- define "platformapi.seconds" -}}
{{- $v := toString .value }}
{{- $num := "([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" }}
{{- $unit := "(ns|us|µs|ms|s|m|h)" }}
{{- if not (regexMatch (printf "^(0|(%s%s)+)$" $num $unit) $v) }}
{{- fail (printf "%s %q is not a duration (a number and a unit: 5s, 1m30s, 500ms)" .name $v) }}
{{- end }}
{{- $scale := dict "ns" 1e-9 "us" 1e-6 "µs" 1e-6 "ms" 1e-3 "s" 1.0 "m" 60.0 "h" 3600.0 }}
{{- $total := 0.0 }}
{{- range regexFindAll (printf "%s%s" $num $unit) $v -1 }}
{{- $n := regexFind "^[0-9.]+" . }}
{{- $total = addf $total (mulf (float64 $n) (get $scale (trimPrefix $n .))) }}
{{- end }}
{{- $total }}
{{- end }}

{{/* Refuses a stop budget the kubelet would cut short: server.stopDelay (serving while not ready), then the drain of serve (server.requestTimeout, 0 meaning its 30 s, and 2 s for the answers) must end within server.terminationGracePeriodSeconds, after which the kubelet kills the pod. extraArgs may not set either flag past the check. */}}
{{- define "platformapi.checkStopBudget" -}}
{{- range .Values.server.extraArgs }}
{{- $arg := toString . }}
{{- range $flag, $value := dict "--request-timeout" "server.requestTimeout" "--stop-delay" "server.stopDelay" }}
{{- if or (eq $arg $flag) (hasPrefix (print $flag "=") $arg) }}
{{- fail (printf "set %s, not %s in server.extraArgs: the chart checks it against server.terminationGracePeriodSeconds" $value $flag) }}
{{- end }}
{{- end }}
{{- end }}
{{- $s := .Values.server }}
{{- $delay := include "platformapi.seconds" (dict "name" "server.stopDelay" "value" $s.stopDelay) | float64 }}
{{- $timeout := include "platformapi.seconds" (dict "name" "server.requestTimeout" "value" $s.requestTimeout) | float64 }}
{{- $shown := toString $s.requestTimeout }}
{{- if eq $timeout 0.0 }}
{{- $timeout = 30.0 }}
{{- $shown = printf "%s, serve's 30s" $shown }}
{{- end }}
{{- $stop := addf $delay $timeout 2 }}
{{- if gt $stop (float64 $s.terminationGracePeriodSeconds) }}
{{- fail (printf "server.stopDelay (%v) + server.requestTimeout (%s) + 2s = %vs exceeds server.terminationGracePeriodSeconds (%v): the kubelet would kill a stopping pod while it drains; raise server.terminationGracePeriodSeconds to %v or more (%v leaves running jobs their 2 s too), or lower the others" $s.stopDelay $shown $stop $s.terminationGracePeriodSeconds (ceil $stop) (add (ceil $stop) 2)) }}
{{- end }}
{{- end }}
