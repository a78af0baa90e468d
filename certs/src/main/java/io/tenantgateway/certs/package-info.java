package io.tenantgateway.certs;
