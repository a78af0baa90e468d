package io.tenantgateway.webhook;
