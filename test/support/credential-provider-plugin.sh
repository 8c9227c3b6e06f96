#!/bin/sh
# A credential provider exec plugin for the e2e tests (kubelet credentialprovider.kubelet.k8s.io/v1):
# reads the CredentialProviderRequest on stdin, appends it (one line) to $KTS_PLUGIN_LOG so the
# test can count execs and see the image asked for, and answers with the credentials from its
# env (set by the CredentialProviderConfig's env) and args: cacheKeyType Registry, 5 minutes.
set -eu
request=$(cat)
printf '%s\n' "$request" >> "$KTS_PLUGIN_LOG"
registry=${1:?usage: credential-provider-plugin.sh <registry host>}
printf '{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse",'
printf '"cacheKeyType":"Registry","cacheDuration":"5m",'
printf '"auth":{"%s":{"username":"%s","password":"%s"}}}\n' "$registry" "$KTS_PLUGIN_USER" "$KTS_PLUGIN_PASSWORD"
