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
