package user.controller;

import user.dto.UserDto;
import user.service.UserService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.*;

import java.util.UUID;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Passenger profiles (email, gender, document). Credentials live in ts-auth-service.
 */
@RestController
@RequestMapping("/api/v1/userservice/users")
public class UserController {

    private static final Logger LOGGER = LoggerFactory.getLogger(UserController.class);

    @Autowired
    private UserService userService;

    @GetMapping("/hello")
    public String hello() {
        return "Hello";
    }

    @GetMapping
    public ResponseEntity getAllUser(@RequestHeader HttpHeaders headers) {
        return ok(userService.getAllUsers(headers));
    }

    @GetMapping("/{userName}")
    public ResponseEntity getUserByUserName(@PathVariable String userName, @RequestHeader HttpHeaders headers) {
        return ok(userService.findByUserName(userName, headers));
    }

    @GetMapping("/id/{userId}")
    public ResponseEntity getUserByUserId(@PathVariable String userId, @RequestHeader HttpHeaders headers) {
        return ok(userService.findByUserId(userId, headers));
    }

    @PostMapping("/register")
    public ResponseEntity registerUser(@RequestBody UserDto userDto, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[registerUser] {}", userDto.getUserName());
        return ResponseEntity.status(HttpStatus.CREATED).body(userService.saveUser(userDto, headers));
    }

    @DeleteMapping("/{userId}")
    public HttpEntity deleteUserById(@PathVariable String userId, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[deleteUserById] {}", userId);
        return ok(userService.deleteUser(UUID.fromString(userId), headers));
    }
}
