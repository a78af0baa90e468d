package io.tenantgateway.tunnel.metrics;

import io.grpc.Status;

/** gRPC status codes spelled the way Go's {@code codes.Code.String()} prints them (upstream metric labels). */
public final class GrpcCodes {
    private GrpcCodes() {
    }

    public static String goName(Status.Code code) {
        return switch (code) {
            case OK -> "OK";
            case CANCELLED -> "Canceled";
            case UNKNOWN -> "Unknown";
            case INVALID_ARGUMENT -> "InvalidArgument";
            case DEADLINE_EXCEEDED -> "DeadlineExceeded";
            case NOT_FOUND -> "NotFound";
            case ALREADY_EXISTS -> "AlreadyExists";
            case PERMISSION_DENIED -> "PermissionDenied";
            case RESOURCE_EXHAUSTED -> "ResourceExhausted";
            case FAILED_PRECONDITION -> "FailedPrecondition";
            case ABORTED -> "Aborted";
            case OUT_OF_RANGE -> "OutOfRange";
            case UNIMPLEMENTED -> "Unimplemented";
            case INTERNAL -> "Internal";
            case UNAVAILABLE -> "Unavailable";
            case DATA_LOSS -> "DataLoss";
            case UNAUTHENTICATED -> "Unauthenticated";
        };
    }
}
