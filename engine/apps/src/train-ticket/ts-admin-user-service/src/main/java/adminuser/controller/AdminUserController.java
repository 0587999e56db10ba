package adminuser.controller;

import adminuser.dto.UserDto;
import adminuser.service.AdminUserService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.web.bind.annotation.*;

import static org.springframework.http.ResponseEntity.ok;

/**
 * Admin management of passenger accounts, on top of ts-user-service.
 */
@RestController
@RequestMapping("/api/v1/adminuserservice/users")
@PreAuthorize("hasRole('ADMIN')")
public class AdminUserController {

    private static final Logger LOGGER = LoggerFactory.getLogger(AdminUserController.class);

    @Autowired
    private AdminUserService adminUserService;

    @GetMapping(path = "/welcome")
    public String home(@RequestHeader HttpHeaders headers) {
        return "Welcome to [ AdminUser Service ] !";
    }

    @CrossOrigin(origins = "*")
    @GetMapping
    public HttpEntity getAllUsers(@RequestHeader HttpHeaders headers) {
        LOGGER.info("[getAllUsers] list accounts");
        return ok(adminUserService.getAllUsers(headers));
    }

    @CrossOrigin(origins = "*")
    @PostMapping
    public HttpEntity addUser(@RequestBody UserDto userDto, @RequestHeader HttpHeaders headers) {
        LOGGER.info("[addUser] {}", userDto.getUserName());
        return ok(adminUserService.addUser(userDto, headers));
    }
}
