package verifycode.controller;

import verifycode.service.VerifyCodeService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.web.bind.annotation.*;

import javax.imageio.ImageIO;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;

/**
 * Login captcha: an image with a 4-character code, bound to the browser by a cookie.
 */
@RestController
@RequestMapping("/api/v1/verifycode")
public class VerifyCodeController {

    private static final Logger LOGGER = LoggerFactory.getLogger(VerifyCodeController.class);

    @Autowired
    private VerifyCodeService verifyCodeService;

    @GetMapping("/generate")
    public void imageCode(@RequestHeader HttpHeaders headers, HttpServletRequest request,
                          HttpServletResponse response) throws IOException {
        Map<String, Object> map = verifyCodeService.getImageCode(60, 20, request, response, headers);
        BufferedImage image = (BufferedImage) map.get(VerifyCodeService.IMAGE);
        response.setContentType("image/jpeg");
        response.setHeader("Cache-Control", "no-store");
        try (OutputStream os = response.getOutputStream()) {
            ImageIO.write(image, "jpg", os);
        }
    }

    @GetMapping(value = "/verify/{verifyCode}")
    public boolean verifyCode(@PathVariable String verifyCode, HttpServletRequest request,
                              HttpServletResponse response, @RequestHeader HttpHeaders headers) {
        boolean ok = verifyCodeService.verifyCode(request, response, verifyCode, headers);
        LOGGER.info("[verifyCode] {}", ok ? "accepted" : "rejected");
        return ok;
    }
}
