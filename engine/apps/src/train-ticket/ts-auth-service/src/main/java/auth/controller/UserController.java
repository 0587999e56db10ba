package auth.controller;

import auth.dto.BasicAuthDto;
import auth.service.TokenService;
import auth.service.UserService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Login and account credentials. nginx routes /api/v1/users/login here.
 */
@RestController
@RequestMapping("/api/v1/users")
public class UserController {

    private static final Logger LOGGER = LoggerFactory.getLogger(UserController.class);

    @Autowired
    private TokenService tokenService;

    @Autowired
    private UserService userService;

    @GetMapping("/hello")
    public String getHello() {
        return "Hello";
    }

    /**
     * Checks the captcha, then the password, and answers a signed JWT.
     * The captcha is bound to the YsbCaptcha cookie the browser got with the image.
     */
    @PostMapping("/login")
    public ResponseEntity getToken(@RequestBody BasicAuthDto dao, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[getToken] login attempt for {}", dao.getUsername());
        return ok(tokenService.getToken(dao, headers));
    }

    @DeleteMapping("/{userId}")
    public HttpEntity deleteUserById(@PathVariable String userId, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[deleteUserById] {}", userId);
        return ok(userService.deleteByUserId(userId, headers));
    }
}
