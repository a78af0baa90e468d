package io.tenantgateway.tunnel.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback listener with backlog 1 that never accepts, filled until the kernel drops further SYNs, so
 * connects to it hang until they time out.
 */
public final class FullListener implements AutoCloseable {
    private final ServerSocket listener;
    private final List<Socket> fillers = new ArrayList<>();

    private FullListener(ServerSocket listener) {
        this.listener = listener;
    }

    public static FullListener open() throws IOException {
        FullListener full = new FullListener(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
        for (int i = 0; i < 16; i++) {
            Socket socket = new Socket();
            full.fillers.add(socket);
            try {
                socket.connect(full.listener.getLocalSocketAddress(), 200);
            } catch (SocketTimeoutException e) {
                return full; // the queue is full: SYNs are dropped now
            }
        }
        full.close();
        throw new IllegalStateException("accept queue never filled (expected: connects to hang at backlog 1)");
    }

    public String address() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        for (Socket socket : fillers) {
            socket.close();
        }
        listener.close();
    }
}
