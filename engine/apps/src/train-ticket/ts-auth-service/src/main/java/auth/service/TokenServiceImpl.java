package auth.service;

import auth.dto.BasicAuthDto;
import auth.dto.TokenDto;
import auth.entity.User;
import auth.repository.UserRepository;
import edu.fudan.common.util.Response;
import io.jsonwebtoken.Claims;
import io.jsonwebtoken.Jwts;
import io.jsonwebtoken.SignatureAlgorithm;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestTemplate;

import java.util.Base64;
import java.util.Date;
import java.util.Map;
import java.util.Optional;

/**
 * Issues HS256 JSON Web Tokens. Every other service validates them with the same
 * secret (the upstream default "secret") and reads the roles claim.
 */
@Service
public class TokenServiceImpl implements TokenService {

    private static final Logger LOGGER = LoggerFactory.getLogger(TokenServiceImpl.class);

    private static final String SECRET_KEY = Base64.getEncoder().encodeToString("secret".getBytes());

    /** Tokens live one hour. */
    private static final long VALIDITY_MS = 3600000L;

    /** The admin UI logs in without a captcha; passengers always get one. */
    private static final String ADMIN_USER = "admin";

    @Autowired
    private UserRepository userRepository;

    @Autowired
    private PasswordEncoder passwordEncoder;

    @Autowired
    private RestTemplate restTemplate;

    @Override
    public Response getToken(BasicAuthDto dto, HttpHeaders headers) {
        String username = dto.getUsername();
        String verifyCode = dto.getVerificationCode();

        if (!ADMIN_USER.equals(username)) {
            if (verifyCode == null || verifyCode.isEmpty()) {
                return new Response<>(0, "Verification code is required", null);
            }
            HttpEntity requestEntity = new HttpEntity(null, headers);  // carries the YsbCaptcha cookie
            ResponseEntity<Boolean> re = restTemplate.exchange(
                    "http://ts-verification-code-service:15678/api/v1/verifycode/verify/" + verifyCode,
                    HttpMethod.GET,
                    requestEntity,
                    Boolean.class);
            if (!Boolean.TRUE.equals(re.getBody())) {
                LOGGER.info("[getToken] wrong verification code for {}", username);
                return new Response<>(0, "Verification failed.", null);
            }
        }

        Optional<User> found = userRepository.findByUsername(username);
        if (!found.isPresent()) {
            return new Response<>(0, "Incorrect username or password.", null);
        }
        User user = found.get();
        if (!passwordEncoder.matches(dto.getPassword(), user.getPassword())) {
            LOGGER.info("[getToken] bad password for {}", username);
            return new Response<>(0, "Incorrect username or password.", null);
        }
        String token = createToken(user);
        return new Response<>(1, "login success", new TokenDto(user.getUserId(), username, token));
    }

    String createToken(User user) {
        Claims claims = Jwts.claims().setSubject(user.getUsername());
        claims.put("roles", user.getRoles());
        claims.put("id", user.getUserId().toString());
        Date now = new Date();
        return Jwts.builder()
                .setClaims(claims)
                .setIssuedAt(now)
                .setExpiration(new Date(now.getTime() + VALIDITY_MS))
                .signWith(SignatureAlgorithm.HS256, SECRET_KEY)
                .compact();
    }

    /** Used by the security filter: a token is valid until its expiry claim. */
    public boolean validateToken(String token) {
        try {
            Claims claims = Jwts.parser().setSigningKey(SECRET_KEY).parseClaimsJws(token).getBody();
            return claims.getExpiration().after(new Date());
        } catch (RuntimeException e) {
            LOGGER.warn("[validateToken] rejected: {}", e.getMessage());
            return false;
        }
    }

    public Map<String, Object> claimsOf(String token) {
        return Jwts.parser().setSigningKey(SECRET_KEY).parseClaimsJws(token).getBody();
    }
}
