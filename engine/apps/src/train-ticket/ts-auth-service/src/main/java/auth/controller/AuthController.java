package auth.controller;

import auth.dto.AuthDto;
import auth.entity.User;
import auth.repository.UserRepository;
import edu.fudan.common.util.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.web.bind.annotation.*;

import java.util.Collections;
import java.util.HashSet;
import java.util.UUID;

/**
 * Creates the credential record of a newly registered user. ts-user-service calls this
 * from its register endpoint; the profile itself lives in ts-user-mongo.
 */
@RestController
@RequestMapping("/api/v1/auth")
public class AuthController {

    private static final Logger LOGGER = LoggerFactory.getLogger(AuthController.class);

    private static final String ROLE_USER = "ROLE_USER";

    @Autowired
    private UserRepository userRepository;

    @Autowired
    private PasswordEncoder passwordEncoder;

    @GetMapping("/hello")
    public Object getHello() {
        return "hello";
    }

    @PostMapping
    public ResponseEntity<Response> createDefaultUser(@RequestBody AuthDto authDto) {
        if (authDto.getUserName() == null || authDto.getPassword() == null) {
            return new ResponseEntity<>(new Response<>(0, "user name and password are required", null),
                    HttpStatus.BAD_REQUEST);
        }
        if (userRepository.findByUsername(authDto.getUserName()).isPresent()) {
            LOGGER.warn("[createDefaultUser] {} already exists", authDto.getUserName());
            return new ResponseEntity<>(new Response<>(0, "user already exists", null), HttpStatus.CONFLICT);
        }
        User user = User.builder()
                .userId(UUID.fromString(authDto.getUserId()))
                .username(authDto.getUserName())
                // BCrypt, strength 10: the expensive part of register and login
                .password(passwordEncoder.encode(authDto.getPassword()))
                .roles(new HashSet<>(Collections.singletonList(ROLE_USER)))
                .build();
        userRepository.save(user);
        return new ResponseEntity<>(new Response<>(1, "SUCCESS", authDto), HttpStatus.CREATED);
    }
}
