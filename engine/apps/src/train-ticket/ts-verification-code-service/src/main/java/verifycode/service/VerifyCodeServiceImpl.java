package verifycode.service;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Service;

import javax.servlet.http.Cookie;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.awt.*;
import java.awt.image.BufferedImage;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

@Service
public class VerifyCodeServiceImpl implements VerifyCodeService {

    private static final Logger LOGGER = LoggerFactory.getLogger(VerifyCodeServiceImpl.class);

    /** No 0/O, 1/I/L: characters people misread in a noisy image. */
    static final String CODE_SOURCE = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    static final int CODE_LENGTH = 4;
    static final String COOKIE_NAME = "YsbCaptcha";

    /** A code is valid for 5 minutes and for one check only. */
    private static final long CODE_TTL_SECONDS = 300;

    private static final Cache<String, String> CODES = CacheBuilder.newBuilder()
            .maximumSize(100_000)
            .expireAfterWrite(CODE_TTL_SECONDS, TimeUnit.SECONDS)
            .build();

    private final SecureRandom random = new SecureRandom();

    @Override
    public Map<String, Object> getImageCode(int width, int height, HttpServletRequest request,
                                            HttpServletResponse response, HttpHeaders headers) {
        String code = generateCode(CODE_LENGTH);
        String key = cookieValue(request);
        if (key == null) {
            key = UUID.randomUUID().toString().replace("-", "");
            Cookie cookie = new Cookie(COOKIE_NAME, key);
            cookie.setMaxAge((int) CODE_TTL_SECONDS);
            cookie.setPath("/");
            response.addCookie(cookie);
        }
        CODES.put(key, code);

        BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setColor(new Color(230, 230, 230));
        g.fillRect(0, 0, width, height);
        for (int i = 0; i < 40; i++) {   // interference lines
            g.setColor(randomColor(150, 220));
            int x = random.nextInt(width), y = random.nextInt(height);
            g.drawLine(x, y, x + random.nextInt(12), y + random.nextInt(12));
        }
        g.setFont(new Font("Times New Roman", Font.BOLD, height - 2));
        for (int i = 0; i < code.length(); i++) {
            g.setColor(randomColor(20, 130));
            g.drawString(String.valueOf(code.charAt(i)), 13 * i + 6, height - 4);
        }
        g.dispose();

        Map<String, Object> result = new HashMap<>();
        result.put(IMAGE, image);
        return result;
    }

    /** Case-insensitive, single use: a checked code is removed whether it matched or not. */
    @Override
    public boolean verifyCode(HttpServletRequest request, HttpServletResponse response, String receivedCode,
                              HttpHeaders headers) {
        String key = cookieValue(request);
        if (key == null || receivedCode == null) {
            return false;
        }
        String expected = CODES.getIfPresent(key);
        CODES.invalidate(key);
        if (expected == null) {
            LOGGER.info("[verifyCode] no live code for this cookie");
            return false;
        }
        return expected.equalsIgnoreCase(receivedCode.trim());
    }

    String generateCode(int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(CODE_SOURCE.charAt(random.nextInt(CODE_SOURCE.length())));
        }
        return sb.toString();
    }

    private Color randomColor(int low, int high) {
        int span = high - low;
        return new Color(low + random.nextInt(span), low + random.nextInt(span), low + random.nextInt(span));
    }

    private static String cookieValue(HttpServletRequest request) {
        if (request.getCookies() == null) {
            return null;
        }
        for (Cookie c : request.getCookies()) {
            if (COOKIE_NAME.equals(c.getName())) {
                return c.getValue();
            }
        }
        return null;
    }
}
