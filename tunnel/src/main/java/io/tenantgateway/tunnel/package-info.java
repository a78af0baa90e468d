package io.tenantgateway.tunnel;
