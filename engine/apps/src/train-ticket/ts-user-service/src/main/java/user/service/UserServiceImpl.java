package user.service;

import edu.fudan.common.util.Response;
import user.dto.AuthDto;
import user.dto.UserDto;
import user.entity.User;
import user.repository.UserRepository;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestTemplate;

import java.util.List;
import java.util.UUID;

@Service
public class UserServiceImpl implements UserService {

    private static final Logger LOGGER = LoggerFactory.getLogger(UserServiceImpl.class);

    private static final String AUTH_SERVICE_URI = "http://ts-auth-service:12340/api/v1";

    @Autowired
    private UserRepository userRepository;

    @Autowired
    private RestTemplate restTemplate;

    /**
     * Registers a passenger: the profile here, the credentials in ts-auth-service. If
     * auth refuses, the profile is not kept, so both stores stay in step.
     */
    @Override
    public Response saveUser(UserDto userDto, HttpHeaders headers) {
        if (userRepository.findByUserName(userDto.getUserName()) != null) {
            return new Response<>(0, "User already exists", null);
        }
        UUID userId = userDto.getUserId() == null ? UUID.randomUUID() : UUID.fromString(userDto.getUserId());
        User user = User.builder()
                .userId(userId)
                .userName(userDto.getUserName())
                .gender(userDto.getGender())
                .documentType(userDto.getDocumentType())
                .documentNum(userDto.getDocumentNum())
                .email(userDto.getEmail() == null ? null : userDto.getEmail().trim().toLowerCase())
                .build();

        AuthDto authDto = AuthDto.builder()
                .userId(userId.toString())
                .userName(userDto.getUserName())
                .password(userDto.getPassword())
                .build();
        try {
            ResponseEntity<Response> re = restTemplate.exchange(AUTH_SERVICE_URI + "/auth", HttpMethod.POST,
                    new HttpEntity<>(authDto, headers), Response.class);
            if (re.getBody() == null || re.getBody().getStatus() != 1) {
                return new Response<>(0, "Register failed: credentials refused", null);
            }
        } catch (HttpClientErrorException e) {
            LOGGER.warn("[saveUser] auth refused {}: {}", userDto.getUserName(), e.getStatusCode());
            return new Response<>(0, "Register failed: " + e.getStatusText(), null);
        }
        userRepository.save(user);
        return new Response<>(1, "REGISTER USER SUCCESS", user);
    }

    @Override
    public Response getAllUsers(HttpHeaders headers) {
        List<User> users = userRepository.findAll();
        if (users == null || users.isEmpty()) {
            return new Response<>(0, "NO User", null);
        }
        return new Response<>(1, "Success", users);
    }

    @Override
    public Response findByUserName(String userName, HttpHeaders headers) {
        User user = userRepository.findByUserName(userName);
        return user == null ? new Response<>(0, "No User", null) : new Response<>(1, "Find User Success", user);
    }

    @Override
    public Response findByUserId(String userId, HttpHeaders headers) {
        User user = userRepository.findByUserId(UUID.fromString(userId));
        return user == null ? new Response<>(0, "No User", null) : new Response<>(1, "Find User Success", user);
    }

    /** Credentials go first: a user without a profile cannot book, one without credentials could. */
    @Override
    public Response deleteUser(UUID userId, HttpHeaders headers) {
        User user = userRepository.findByUserId(userId);
        if (user == null) {
            return new Response<>(0, "USER NOT EXISTS", null);
        }
        ResponseEntity<Response> re = restTemplate.exchange(AUTH_SERVICE_URI + "/users/" + userId,
                HttpMethod.DELETE, new HttpEntity(null, headers), Response.class);
        if (re.getBody() == null || re.getBody().getStatus() != 1) {
            return new Response<>(0, "Delete credentials failed", null);
        }
        userRepository.deleteByUserId(userId);
        return new Response<>(1, "DELETE SUCCESS", null);
    }
}
