package io.tenantgateway.agent.http;

/**
 * Answers the requests of one {@link HttpEndpoint}. Called on the endpoint's event loop once a request has arrived in
 * full, one request of a connection at a time: it must not block. Work that blocks goes to
 * {@link HttpLoop#blocking}, which ends the {@link Response} from there. A handler that throws before ending the
 * response gets a 500 sent for it.
 */
@FunctionalInterface
public interface HttpHandler {
    void handle(Request request, Response response);
}
